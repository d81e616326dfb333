/*
 * Build-time settings of the button panel, each with a default and a clamp,
 * in the manner of QMK's DEBOUNCE. Override with -D on the make line.
 */
#ifndef PANEL_CONFIG_H
#define PANEL_CONFIG_H

#define FW_VERSION_MAJOR 1
#define FW_VERSION_MINOR 0

/* Protocol version carried in the first byte of every frame body. */
#define PROTOCOL_VERSION 1

/* Seats served by this panel (1..4). Matrix row s is seat s; the operator row follows. */
#ifndef PANEL_SEATS
#define PANEL_SEATS 4
#endif
#if PANEL_SEATS < 1 || PANEL_SEATS > 4
#error "PANEL_SEATS must be 1..4"
#endif
#define MATRIX_ROWS (PANEL_SEATS + 1)
#define MATRIX_COLS 5
#define OPERATOR_ROW PANEL_SEATS

/* Panel id used when the EEPROM holds none (erased 0xFFFF). */
#ifndef PANEL_ID
#define PANEL_ID 1
#endif

/* Debounce time in ms: a key must read the same for this long before it counts. */
#ifndef DEBOUNCE
#define DEBOUNCE 5
#endif
#if DEBOUNCE < 1
#undef DEBOUNCE
#define DEBOUNCE 1
#elif DEBOUNCE > 100
#undef DEBOUNCE
#define DEBOUNCE 100
#endif

/* Unacknowledged events are sent again after this many ms without progress. */
#ifndef RESEND_MS
#define RESEND_MS 50
#endif

/* Events kept until the host acknowledges them; new events beyond this are dropped and counted. */
#ifndef EVQ_SIZE
#define EVQ_SIZE 64
#endif

#define HEARTBEAT_MS 1000

/* Largest frame body (version, type, payload) either side sends. */
#define BODY_MAX 24
/* Largest encoded frame: body + CRC + COBS overhead + terminating zero. */
#define FRAME_MAX (BODY_MAX + 2 + 2 + 1)

#endif
