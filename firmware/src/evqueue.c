/* Ring buffer of unacknowledged events with go-back-N resending. */
#include "evqueue.h"

#include <stddef.h>

void evq_init(evqueue_t *q) {
    q->head = 0;
    q->count = 0;
    q->sent = 0;
    q->ever = 0;
    q->next_seq = 0;
    q->dropped = 0;
    q->timer_ms = 0;
}

bool evq_push(evqueue_t *q, uint8_t seat, uint8_t key, uint8_t pressed, uint32_t now) {
    if (q->count == EVQ_SIZE) {
        q->dropped++;
        return false;
    }
    panel_event_t *e = &q->items[(uint8_t)((q->head + q->count) % EVQ_SIZE)];
    e->seq = q->next_seq++;
    e->ms = now;
    e->seat = seat;
    e->key = key;
    e->pressed = pressed;
    q->count++;
    return true;
}

const panel_event_t *evq_next(evqueue_t *q, uint32_t now) {
    if (q->count == 0) {
        return NULL;
    }
    if (q->sent == q->count) {
        if ((uint32_t)(now - q->timer_ms) < RESEND_MS) {
            return NULL;
        }
        q->sent = 0;
    }
    return &q->items[(uint8_t)((q->head + q->sent) % EVQ_SIZE)];
}

void evq_mark_sent(evqueue_t *q, uint32_t now) {
    q->sent++;
    if (q->sent > q->ever) {
        q->ever = q->sent;
    }
    q->timer_ms = now;
}

uint8_t evq_ack(evqueue_t *q, uint16_t seq, uint32_t now) {
    if (q->count == 0) {
        return 0;
    }
    uint16_t offset = (uint16_t)(seq - q->items[q->head].seq);
    if (offset >= q->ever) {
        return 0;
    }
    uint8_t n = (uint8_t)(offset + 1);
    q->head = (uint8_t)((q->head + n) % EVQ_SIZE);
    q->count = (uint8_t)(q->count - n);
    q->ever = (uint8_t)(q->ever - n);
    q->sent = q->sent > n ? (uint8_t)(q->sent - n) : 0;
    q->timer_ms = now;
    return n;
}

uint16_t evq_oldest_seq(const evqueue_t *q) {
    return q->count ? q->items[q->head].seq : q->next_seq;
}
