/* The interrupt flags (src/cli/interrupt.h). */
#include "interrupt.h"

volatile int interrupt_pending;
volatile int interrupt_busy;
