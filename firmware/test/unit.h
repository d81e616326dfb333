/* A few lines of test harness: CHECK counts and reports, main returns the failures. */
#ifndef PANEL_UNIT_H
#define PANEL_UNIT_H

#include <stdio.h>

extern int unit_checks;
extern int unit_failures;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        unit_checks++;                                                            \
        if (!(cond)) {                                                            \
            unit_failures++;                                                      \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
        }                                                                         \
    } while (0)

void test_debounce(void);
void test_frame(const char *vectors_path);
void test_panel(void);

#endif
