/*
 * The hardware shim: the only code that touches AVR registers. Pin map in
 * docs/wiring.md: rows PC0..PC4 (A0..A4, driven low one at a time), columns
 * PD2..PD6 (D2..D6, pulled up), 74HC595 data PB0 (D8), clock PB1 (D9),
 * latch PB2 (D10), USB serial on PD0/PD1.
 */
#ifndef PANEL_HW_H
#define PANEL_HW_H

#include <stdbool.h>
#include <stdint.h>

#include "debounce.h"

/* Sets up clock, UART, pins and watchdog; returns the reset cause (MCUSR bits). */
uint8_t hw_init(void);

uint32_t hw_millis(void);

/* Returns true once per elapsed millisecond tick (the scan cadence). */
bool hw_take_tick(void);

/* Reads the key matrix: bit c of raw[r] is set while the key at row r, column c is closed. */
void hw_scan(matrix_row_t raw[MATRIX_ROWS]);

/* Shows LED bits on the 74HC595 outputs Q0..Q7; shifts only when they change. */
void hw_leds(uint8_t bits);

/* Returns the next received byte, or -1 when none is waiting. */
int16_t hw_uart_read(void);

/* Free bytes in the transmit buffer. */
uint8_t hw_uart_room(void);

/* Queues bytes for sending; the caller checks hw_uart_room first. */
void hw_uart_write(const uint8_t *data, uint8_t len);

/* Panel id from EEPROM word 0, or PANEL_ID when the EEPROM is erased. */
uint16_t hw_panel_id(void);

/* Tells the watchdog the main loop is alive. */
void hw_alive(void);

/* Sleeps until an interrupt unless a tick or a received byte is already waiting. */
void hw_idle(void);

#endif
