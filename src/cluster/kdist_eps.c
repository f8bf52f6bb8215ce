#include "kdist_eps.h"

#include <math.h>

double kdist_eps_for(double d2)
{
    if (!(d2 > 0))
        return 0;
    double e = sqrt(d2);
    while (e * e < d2)
        e = nextafter(e, INFINITY);
    for (double p = nextafter(e, 0); p > 0 && p * p >= d2; p = nextafter(p, 0))
        e = p;
    return e;
}
