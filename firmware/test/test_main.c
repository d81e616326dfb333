/* Runs the host unit tests of the panel logic; argv[1] is docs/protocol.md (the test vectors). */
#include <stdio.h>

#include "unit.h"

int unit_checks;
int unit_failures;

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s docs/protocol.md\n", argv[0]);
        return 2;
    }
    test_debounce();
    test_frame(argv[1]);
    test_panel();
    printf("%d checks, %d failed\n", unit_checks, unit_failures);
    return unit_failures ? 1 : 0;
}
