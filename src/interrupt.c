/* The interrupt flags (src/interrupt.h). */
#include "interrupt.h"

volatile int interrupt_pending;
volatile int interrupt_busy;
