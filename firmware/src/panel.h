/*
 * The panel's protocol logic, free of hardware: it takes received bytes, raw
 * matrix scans and the millisecond clock, and hands out frames to send and
 * the LED outputs to show. main.c feeds it from the hardware shim; the host
 * tests feed it directly.
 */
#ifndef PANEL_PANEL_H
#define PANEL_PANEL_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "debounce.h"
#include "evqueue.h"

/* Message types (docs/protocol.md). */
#define MSG_HELLO 0x01
#define MSG_EVENT 0x02
#define MSG_HEARTBEAT 0x03
#define MSG_HELLO_REQUEST 0x81
#define MSG_ACK 0x82
#define MSG_SET_LED 0x83
#define MSG_SET_SESSION 0x84
/* Only in test builds (-DPANEL_TEST_HOOKS): makes the main loop hang, to prove the watchdog. */
#define MSG_TEST_HANG 0xEE

#define SEAT_OPERATOR 0xFF
/* Key codes: seat row columns 0..4, then the operator row's two keys. */
#define KEY_PASS 0
#define KEY_PLAY 4
#define KEY_UNDO 5
#define KEY_OK 6
#define OPERATOR_COLS_MASK 0x03

#define LED_TURN 0
#define LED_ERROR 1
#define LED_COUNT (PANEL_SEATS * 2)
/* One pattern bit per 125 ms slot, most significant first: a one-second loop. */
#define LED_SLOT_MS 125

typedef struct {
    evqueue_t queue;
    debounce_t deb;
    matrix_row_t cooked[MATRIX_ROWS];
    uint8_t leds[LED_COUNT];
    uint8_t rx[FRAME_MAX];
    uint8_t rx_len;
    bool rx_overflow;
    uint16_t rx_bad;
    uint32_t heartbeat_ms;
    bool hello_due;
    uint16_t panel_id;
    uint8_t reset_cause;
    uint16_t session; /* set by the host, 0 after reset: tells it whether the panel restarted */
    bool hang; /* test builds: MSG_TEST_HANG received */
} panel_t;

void panel_init(panel_t *p, uint16_t panel_id, uint8_t reset_cause, uint32_t now);

/* Takes one received byte; a zero ends a frame, bad frames are counted in rx_bad. */
void panel_rx_byte(panel_t *p, uint8_t byte, uint32_t now);

/* Takes one raw matrix scan (bit set = key closed) and queues an event per debounced change. */
void panel_scan(panel_t *p, const matrix_row_t raw[MATRIX_ROWS], uint32_t now);

/* Writes the next frame due into out (FRAME_MAX bytes); returns its length, 0 if none. */
uint8_t panel_next_frame(panel_t *p, uint32_t now, uint8_t *out);

/* Returns the LED outputs: bit 2*seat is the turn LED, bit 2*seat+1 the error LED. */
uint8_t panel_led_bits(const panel_t *p, uint32_t now);

#endif
