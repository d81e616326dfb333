/*
 * Panel protocol logic on the host: HELLO and heartbeat timing, event
 * sequencing, cumulative ACK and go-back-N resend, the full queue, LED
 * patterns, and survival of garbage on the receive side.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "panel.h"
#include "unit.h"

typedef struct {
    uint8_t type;
    uint8_t body[BODY_MAX];
    int len;
} sent_t;

/* Takes the next frame the panel wants to send at now; type 0 when none. */
static sent_t next(panel_t *p, uint32_t now) {
    sent_t s = {0, {0}, 0};
    uint8_t out[FRAME_MAX];
    uint8_t n = panel_next_frame(p, now, out);
    if (n == 0) {
        return s;
    }
    CHECK(out[n - 1] == 0 && memchr(out, 0, n - 1) == NULL, "frame not terminated once");
    int16_t len = frame_decode(out, (uint8_t)(n - 1));
    CHECK(len >= 2, "panel sent an undecodable frame (%d)", len);
    s.len = len;
    memcpy(s.body, out, (size_t)(len > 0 ? len : 0));
    s.type = s.body[1];
    return s;
}

static uint16_t event_seq(const sent_t *s) { return (uint16_t)(s->body[2] | s->body[3] << 8); }

static void send_body(panel_t *p, const uint8_t *body, uint8_t len, uint32_t now) {
    uint8_t out[FRAME_MAX];
    uint8_t n = frame_encode(body, len, out);
    for (uint8_t i = 0; i < n; i++) {
        panel_rx_byte(p, out[i], now);
    }
}

static void ack(panel_t *p, uint16_t seq, uint32_t now) {
    uint8_t body[4] = {PROTOCOL_VERSION, MSG_ACK, (uint8_t)seq, (uint8_t)(seq >> 8)};
    send_body(p, body, 4, now);
}

/* Holds a key closed for DEBOUNCE ms of scans starting at *now, then opens it for as long. */
static void tap(panel_t *p, uint8_t row, uint8_t col, uint32_t *now) {
    matrix_row_t raw[MATRIX_ROWS] = {0};
    raw[row] = (matrix_row_t)(1u << col);
    for (int i = 0; i <= DEBOUNCE; i++) {
        panel_scan(p, raw, (*now)++);
    }
    raw[row] = 0;
    for (int i = 0; i <= DEBOUNCE; i++) {
        panel_scan(p, raw, (*now)++);
    }
}

static void test_hello_and_heartbeat(void) {
    panel_t p;
    panel_init(&p, 0x1234, 0x08, 100);
    sent_t s = next(&p, 100);
    CHECK(s.type == MSG_HELLO && s.len == 16, "first frame is HELLO (type %u len %d)", s.type, s.len);
    CHECK(s.body[14] == 0 && s.body[15] == 0, "session 0 after reset");
    CHECK(s.body[2] == FW_VERSION_MAJOR && s.body[4] == 0x34 && s.body[5] == 0x12, "HELLO fields");
    CHECK(s.body[6] == PANEL_SEATS && s.body[7] == 0x08, "HELLO seats and reset cause");
    CHECK(next(&p, 100).type == 0, "nothing more at boot");
    CHECK(next(&p, 1099).type == 0, "no heartbeat before a second");
    s = next(&p, 1100);
    CHECK(s.type == MSG_HEARTBEAT && s.len == 15 + LED_COUNT, "heartbeat after a second");
    CHECK(next(&p, 1100).type == 0, "one heartbeat a second");
    uint8_t req[2] = {PROTOCOL_VERSION, MSG_HELLO_REQUEST};
    uint8_t session[4] = {PROTOCOL_VERSION, MSG_SET_SESSION, 0xCD, 0xAB};
    send_body(&p, session, 4, 1150);
    s = next(&p, 1150);
    CHECK(s.type == MSG_HELLO && s.body[14] == 0xCD && s.body[15] == 0xAB, "SET_SESSION answered by HELLO");
    send_body(&p, req, 2, 1200);
    s = next(&p, 1200);
    CHECK(s.type == MSG_HELLO && s.body[14] == 0xCD && s.body[15] == 0xAB, "HELLO on request, with the session");
    s = next(&p, 2200);
    CHECK(s.type == MSG_HEARTBEAT && s.body[13] == 0xCD && s.body[14] == 0xAB, "heartbeat has the session");
}

static void test_events_ack_and_resend(void) {
    panel_t p;
    uint32_t now = 0;
    panel_init(&p, 1, 1, now);
    next(&p, now);
    tap(&p, 2, 4, &now);
    tap(&p, OPERATOR_ROW, 1, &now);
    sent_t s = next(&p, now);
    CHECK(s.type == MSG_EVENT && event_seq(&s) == 0, "first event seq 0");
    CHECK(s.body[8] == 2 && s.body[9] == KEY_PLAY && s.body[10] == 1, "seat 2 PLAY press");
    uint32_t ms = (uint32_t)(s.body[4] | s.body[5] << 8 | s.body[6] << 16 | (uint32_t)s.body[7] << 24);
    CHECK(ms == DEBOUNCE, "event time is when the key settled (%u)", ms);
    s = next(&p, now);
    CHECK(event_seq(&s) == 1 && s.body[10] == 0, "seq 1 release");
    s = next(&p, now);
    CHECK(event_seq(&s) == 2 && s.body[8] == SEAT_OPERATOR && s.body[9] == KEY_OK, "operator OK");
    next(&p, now);
    CHECK(next(&p, now).type == 0, "four events, sent once each");
    CHECK(next(&p, now + RESEND_MS - 1).type == 0, "no resend before RESEND_MS");
    ack(&p, 1, now + 10);
    CHECK(p.queue.count == 2, "ACK 1 releases seq 0 and 1 (count %u)", p.queue.count);
    ack(&p, 40, now + 11);
    CHECK(p.queue.count == 2, "ACK outside the window is ignored");
    s = next(&p, now + 10 + RESEND_MS);
    CHECK(s.type == MSG_EVENT && event_seq(&s) == 2, "go back to the oldest unacknowledged");
    s = next(&p, now + 10 + RESEND_MS);
    CHECK(event_seq(&s) == 3, "then the rest in order");
    ack(&p, 3, now + 70);
    CHECK(p.queue.count == 0 && next(&p, now + 500).type == 0, "all acknowledged, quiet");
    CHECK(p.rx_bad == 0, "valid ACKs are not errors");
}

static void test_queue_full(void) {
    panel_t p;
    uint32_t now = 0;
    panel_init(&p, 1, 1, now);
    for (int i = 0; i < EVQ_SIZE / 2 + 1; i++) {
        tap(&p, 0, 0, &now);
    }
    CHECK(p.queue.count == EVQ_SIZE && p.queue.dropped == 2, "full queue drops new events (%u, %u)",
          p.queue.count, p.queue.dropped);
    next(&p, now);
    sent_t s = next(&p, 1000 + now);
    CHECK(s.type == MSG_HEARTBEAT && s.body[8] == EVQ_SIZE && s.body[11] == 2, "heartbeat reports the loss");
}

static void test_leds(void) {
    panel_t p;
    panel_init(&p, 1, 1, 0);
    uint8_t on[5] = {PROTOCOL_VERSION, MSG_SET_LED, 1, LED_ERROR, 0xFF};
    uint8_t blink[5] = {PROTOCOL_VERSION, MSG_SET_LED, 3, LED_TURN, 0xF0};
    send_body(&p, on, 5, 0);
    send_body(&p, blink, 5, 0);
    CHECK(panel_led_bits(&p, 0) == 0x48, "seat 1 error on, seat 3 turn lit (%02x)", panel_led_bits(&p, 0));
    CHECK(panel_led_bits(&p, 499) == 0x48, "blink lit for the first half second");
    CHECK(panel_led_bits(&p, 500) == 0x08, "blink dark for the second half");
    CHECK(panel_led_bits(&p, 1000) == 0x48, "pattern loops every second");
    uint8_t bad[5] = {PROTOCOL_VERSION, MSG_SET_LED, PANEL_SEATS, LED_TURN, 0xFF};
    send_body(&p, bad, 5, 0);
    CHECK(p.rx_bad == 1 && panel_led_bits(&p, 0) == 0x48, "SET_LED for a missing seat refused");
    next(&p, 0);
    sent_t s = next(&p, 1000);
    CHECK(s.body[15 + 3] == 0xFF && s.body[15 + 6] == 0xF0, "heartbeat lists the patterns");
}

static void test_garbage(void) {
    panel_t p;
    panel_init(&p, 1, 1, 0);
    next(&p, 0);
    srand(7);
    for (int i = 0; i < 100000; i++) {
        panel_rx_byte(&p, (uint8_t)(rand() % 8 ? rand() : 0), 0);
    }
    panel_rx_byte(&p, 0, 0);
    uint16_t bad = p.rx_bad;
    CHECK(bad > 1000, "garbage counted (%u)", bad);
    uint8_t req[2] = {PROTOCOL_VERSION, MSG_HELLO_REQUEST};
    send_body(&p, req, 2, 0);
    CHECK(p.rx_bad == bad && next(&p, 0).type == MSG_HELLO, "a frame after a zero is understood");
    for (int i = 0; i < 300; i++) {
        panel_rx_byte(&p, 0x55, 0);
    }
    panel_rx_byte(&p, 0, 0);
    CHECK(p.rx_bad == bad + 1, "an overlong block counts once");
    panel_rx_byte(&p, 0, 0);
    CHECK(p.rx_bad == bad + 1, "an empty block is not an error");
}

void test_panel(void) {
    test_hello_and_heartbeat();
    test_events_ack_and_resend();
    test_queue_full();
    test_leds();
    test_garbage();
}
