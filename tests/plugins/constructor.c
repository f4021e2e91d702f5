/*
 * tests/plugins/constructor.c - a library whose code runs the moment it is loaded, as an
 * attacker's would (tests/test_hardening.c, issue 54): its constructor appends a line to
 * the file $PFISIM_TEST_MARK names, before pfisim could check anything. It is also a valid
 * policy library, the shipped example's equal-plugin, so that a test shows the same file
 * loading, and the mark appearing, where loading was allowed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../../policies/examples/equal_plugin.c"

__attribute__((constructor)) static void
mark(void)
{
    const char *path = getenv("PFISIM_TEST_MARK");
    FILE *fp = path && *path ? fopen(path, "a") : NULL;

    if (fp) {
        fputs("code ran\n", fp);
        fclose(fp);
    }
}
