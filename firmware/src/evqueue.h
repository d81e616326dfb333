/*
 * Outgoing key events kept until the host acknowledges them (go-back-N):
 * new events go out at once, the host acknowledges cumulatively (ACK n covers
 * every sequence number up to n), and when RESEND_MS pass without progress
 * every unacknowledged event is sent again from the oldest. The host accepts
 * only the next sequence number it expects, so each event arrives once and in
 * order. A full queue drops the new event and counts it.
 */
#ifndef PANEL_EVQUEUE_H
#define PANEL_EVQUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

typedef struct {
    uint16_t seq;
    uint32_t ms;
    uint8_t seat; /* 0..PANEL_SEATS-1, or SEAT_OPERATOR */
    uint8_t key;
    uint8_t pressed;
} panel_event_t;

typedef struct {
    panel_event_t items[EVQ_SIZE];
    uint8_t head;     /* index of the oldest unacknowledged event */
    uint8_t count;    /* events held */
    uint8_t sent;     /* events (from head) sent since the last go-back */
    uint8_t ever;     /* events (from head) sent at least once: the ACK window */
    uint16_t next_seq;
    uint16_t dropped;
    uint32_t timer_ms; /* last send or acknowledgement progress */
} evqueue_t;

void evq_init(evqueue_t *q);

/* Adds an event with the next sequence number; false (and dropped++) when full. */
bool evq_push(evqueue_t *q, uint8_t seat, uint8_t key, uint8_t pressed, uint32_t now);

/* Returns the event to send now, or NULL; call evq_mark_sent after sending it. */
const panel_event_t *evq_next(evqueue_t *q, uint32_t now);
void evq_mark_sent(evqueue_t *q, uint32_t now);

/* Applies a cumulative ACK; one outside the sent window is ignored. Returns events released. */
uint8_t evq_ack(evqueue_t *q, uint16_t seq, uint32_t now);

/* Sequence number of the oldest unacknowledged event (next_seq if none). */
uint16_t evq_oldest_seq(const evqueue_t *q);

#endif
