/* The program's version, as `tcjoin --version`, the front ends' greeting
 * and the sessions row give it. */
#ifndef TCJ_VERSION_H
#define TCJ_VERSION_H

#define TCJ_VERSION "0.1.0"

#endif
