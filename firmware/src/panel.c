/* Protocol state machine of the panel: HELLO, heartbeat, events, ACK and LED commands. */
#include "panel.h"

#include "frame.h"

static void put16(uint8_t *b, uint16_t v) {
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *b, uint32_t v) {
    put16(b, (uint16_t)v);
    put16(b + 2, (uint16_t)(v >> 16));
}

void panel_init(panel_t *p, uint16_t panel_id, uint8_t reset_cause, uint32_t now) {
    evq_init(&p->queue);
    debounce_init(&p->deb, (uint16_t)now);
    for (uint8_t r = 0; r < MATRIX_ROWS; r++) {
        p->cooked[r] = 0;
    }
    for (uint8_t i = 0; i < LED_COUNT; i++) {
        p->leds[i] = 0;
    }
    p->rx_len = 0;
    p->rx_overflow = false;
    p->rx_bad = 0;
    p->heartbeat_ms = now;
    p->hello_due = true;
    p->panel_id = panel_id;
    p->reset_cause = reset_cause;
    p->session = 0;
    p->hang = false;
}

static bool handle_body(panel_t *p, const uint8_t *body, uint8_t len, uint32_t now) {
    switch (body[1]) {
    case MSG_HELLO_REQUEST:
        if (len != 2) {
            return false;
        }
        p->hello_due = true;
        return true;
    case MSG_ACK:
        if (len != 4) {
            return false;
        }
        evq_ack(&p->queue, (uint16_t)(body[2] | (body[3] << 8)), now);
        return true;
    case MSG_SET_SESSION:
        if (len != 4) {
            return false;
        }
        p->session = (uint16_t)(body[2] | (body[3] << 8));
        p->hello_due = true;
        return true;
    case MSG_SET_LED:
        if (len != 5 || body[2] >= PANEL_SEATS || body[3] > LED_ERROR) {
            return false;
        }
        p->leds[body[2] * 2 + body[3]] = body[4];
        return true;
#ifdef PANEL_TEST_HOOKS
    case MSG_TEST_HANG:
        p->hang = true;
        return true;
#endif
    default:
        return false;
    }
}

void panel_rx_byte(panel_t *p, uint8_t byte, uint32_t now) {
    if (byte != 0) {
        if (p->rx_len < sizeof p->rx) {
            p->rx[p->rx_len++] = byte;
        } else {
            p->rx_overflow = true;
        }
        return;
    }
    if (p->rx_overflow) {
        p->rx_bad++;
    } else if (p->rx_len > 0) {
        int16_t n = frame_decode(p->rx, p->rx_len);
        if (n < 0 || !handle_body(p, p->rx, (uint8_t)n, now)) {
            p->rx_bad++;
        }
    }
    p->rx_len = 0;
    p->rx_overflow = false;
}

void panel_scan(panel_t *p, const matrix_row_t raw[MATRIX_ROWS], uint32_t now) {
    matrix_row_t masked[MATRIX_ROWS];
    matrix_row_t before[MATRIX_ROWS];
    for (uint8_t r = 0; r < MATRIX_ROWS; r++) {
        masked[r] = raw[r] & (r == OPERATOR_ROW ? OPERATOR_COLS_MASK : (1u << MATRIX_COLS) - 1);
        before[r] = p->cooked[r];
    }
    if (!debounce(&p->deb, masked, p->cooked, (uint16_t)now)) {
        return;
    }
    for (uint8_t r = 0; r < MATRIX_ROWS; r++) {
        matrix_row_t delta = before[r] ^ p->cooked[r];
        for (uint8_t c = 0; c < MATRIX_COLS; c++) {
            if (delta & (1u << c)) {
                bool op = r == OPERATOR_ROW;
                evq_push(&p->queue, op ? SEAT_OPERATOR : r, (uint8_t)(op ? KEY_UNDO + c : c),
                         (p->cooked[r] >> c) & 1, now);
            }
        }
    }
}

uint8_t panel_next_frame(panel_t *p, uint32_t now, uint8_t *out) {
    uint8_t body[BODY_MAX];
    uint8_t len;
    body[0] = PROTOCOL_VERSION;
    if (p->hello_due) {
        p->hello_due = false;
        body[1] = MSG_HELLO;
        body[2] = FW_VERSION_MAJOR;
        body[3] = FW_VERSION_MINOR;
        put16(body + 4, p->panel_id);
        body[6] = PANEL_SEATS;
        body[7] = p->reset_cause;
        put16(body + 8, evq_oldest_seq(&p->queue));
        put32(body + 10, now);
        put16(body + 14, p->session);
        len = 16;
    } else if ((uint32_t)(now - p->heartbeat_ms) >= HEARTBEAT_MS) {
        p->heartbeat_ms = now;
        body[1] = MSG_HEARTBEAT;
        put32(body + 2, now);
        put16(body + 6, p->queue.next_seq);
        body[8] = p->queue.count;
        put16(body + 9, p->rx_bad);
        put16(body + 11, p->queue.dropped);
        put16(body + 13, p->session);
        for (uint8_t i = 0; i < LED_COUNT; i++) {
            body[15 + i] = p->leds[i];
        }
        len = 15 + LED_COUNT;
    } else {
        const panel_event_t *e = evq_next(&p->queue, now);
        if (e == 0) {
            return 0;
        }
        body[1] = MSG_EVENT;
        put16(body + 2, e->seq);
        put32(body + 4, e->ms);
        body[8] = e->seat;
        body[9] = e->key;
        body[10] = e->pressed;
        len = 11;
        evq_mark_sent(&p->queue, now);
    }
    return frame_encode(body, len, out);
}

uint8_t panel_led_bits(const panel_t *p, uint32_t now) {
    uint8_t slot = (uint8_t)((now / LED_SLOT_MS) % 8);
    uint8_t bits = 0;
    for (uint8_t i = 0; i < LED_COUNT; i++) {
        if ((p->leds[i] << slot) & 0x80) {
            bits |= (uint8_t)(1u << i);
        }
    }
    return bits;
}
