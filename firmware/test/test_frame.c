/*
 * CRC, COBS and frame tests: the byte-level vectors of docs/protocol.md (the
 * same ones the Python tests read), COBS round trips over every length and a
 * long run without zeros.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cobs.h"
#include "crc16.h"
#include "frame.h"
#include "panel.h"
#include "unit.h"

static int from_hex(const char *hex, uint8_t *out, size_t room) {
    if (strcmp(hex, "-") == 0) {
        return 0;
    }
    size_t n = strlen(hex);
    if (n % 2 || n / 2 > room) {
        return -1;
    }
    for (size_t i = 0; i < n / 2; i++) {
        unsigned byte;
        if (sscanf(hex + 2 * i, "%2x", &byte) != 1) {
            return -1;
        }
        out[i] = (uint8_t)byte;
    }
    return (int)(n / 2);
}

static int error_code(const char *reason) {
    if (strcmp(reason, "cobs") == 0) {
        return FRAME_ERR_COBS;
    }
    if (strcmp(reason, "short") == 0) {
        return FRAME_ERR_SHORT;
    }
    if (strcmp(reason, "crc") == 0) {
        return FRAME_ERR_CRC;
    }
    if (strcmp(reason, "version") == 0) {
        return FRAME_ERR_VERSION;
    }
    return 0;
}

static void check_vector(const char *kind, const char *name, const char *a, const char *b) {
    uint8_t x[256], y[256], out[256];
    int nx = from_hex(a, x, sizeof x);
    int ny = from_hex(b, y, sizeof y);
    CHECK(nx >= 0 && (ny >= 0 || strcmp(kind, "reject") == 0), "%s %s: bad hex", kind, name);
    if (nx < 0 || (ny < 0 && strcmp(kind, "reject") != 0)) {
        return;
    }
    if (strcmp(kind, "crc") == 0) {
        CHECK(ny == 2 && crc16(x, (uint8_t)nx) == (uint16_t)(y[0] << 8 | y[1]), "crc %s", a);
    } else if (strcmp(kind, "frame") == 0) {
        uint8_t n = frame_encode(x, (uint8_t)nx, out);
        CHECK(n == ny && memcmp(out, y, n) == 0, "frame %s: encoding differs", name);
        int16_t got = frame_decode(y, (uint8_t)(ny - 1));
        CHECK(got == nx && memcmp(y, x, (size_t)nx) == 0, "frame %s: decoding gave %d", name, got);
    } else if (strcmp(kind, "reject") == 0) {
        int want = error_code(b);
        int16_t got = frame_decode(x, (uint8_t)nx);
        CHECK(want != 0 && got == want, "reject %s: got %d, want %d", name, got, want);
    } else if (strcmp(kind, "invalid") == 0) {
        panel_t p;
        panel_init(&p, 1, 0, 0);
        for (int i = 0; i < ny; i++) {
            panel_rx_byte(&p, y[i], 0);
        }
        CHECK(p.rx_bad == 1, "invalid %s: rx_bad %u", name, p.rx_bad);
    }
}

static void test_vectors(const char *path) {
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s", path);
    if (!f) {
        return;
    }
    char line[1024], kind[16], name[64], a[512], b[512];
    int seen[4] = {0};
    const char *kinds[4] = {"crc", "frame", "reject", "invalid"};
    int in_section = 0;
    while (fgets(line, sizeof line, f)) {
        int fields;
        if (strncmp(line, "## ", 3) == 0) {
            in_section = strncmp(line, "## Test vectors", 15) == 0;
        }
        if (!in_section) {
            continue;
        }
        if (strncmp(line, "crc ", 4) == 0) {
            fields = sscanf(line, "%15s %511s %511s", kind, a, b);
            strcpy(name, a);
            fields = fields == 3 ? 4 : 0;
        } else {
            fields = sscanf(line, "%15s %63s %511s %511s", kind, name, a, b);
        }
        for (int k = 0; k < 4; k++) {
            if (fields == 4 && strcmp(kind, kinds[k]) == 0) {
                seen[k]++;
                check_vector(kind, name, a, b);
            }
        }
    }
    fclose(f);
    for (int k = 0; k < 4; k++) {
        CHECK(seen[k] > 0, "no %s vectors in %s", kinds[k], path);
    }
}

static void test_cobs_round_trips(void) {
    uint8_t in[300], enc[310], buf[310];
    srand(4);
    for (int len = 0; len <= 300; len++) {
        for (int trial = 0; trial < 4; trial++) {
            for (int i = 0; i < len; i++) {
                /* trial 0: no zeros at all (runs of 254 and more); others: some zeros. */
                in[i] = (uint8_t)(trial == 0 ? 1 + rand() % 255 : (rand() % 4 ? rand() % 256 : 0));
            }
            uint16_t n = cobs_encode(in, (uint16_t)len, enc);
            CHECK(n <= len + len / 254 + 1, "len %d: %u bytes encoded", len, n);
            CHECK(memchr(enc, 0, n) == NULL, "len %d: zero in encoding", len);
            memcpy(buf, enc, n);
            int16_t back = cobs_decode(buf, n);
            CHECK(back == len && memcmp(buf, in, (size_t)len) == 0, "len %d trial %d: round trip", len, trial);
        }
    }
}

void test_frame(const char *vectors_path) {
    test_vectors(vectors_path);
    test_cobs_round_trips();
}
