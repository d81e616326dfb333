/*
 * ATmega328P at 16 MHz: Timer0 gives the 1 kHz clock, USART0 runs at
 * 115200 8N1 from interrupt-driven ring buffers, the matrix is scanned row by
 * row, LEDs go out through a 74HC595, and a 250 ms watchdog resets the chip
 * if the main loop stops.
 */
#include "hw.h"

#include <avr/eeprom.h>
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <avr/wdt.h>
#include <util/atomic.h>
#include <util/delay.h>

#define BAUD 115200
/* 115200 from 16 MHz is 2.1 % fast with U2X (UBRR 16); accept up to 3 %. */
#define BAUD_TOL 3
#include <util/setbaud.h>

#define ROW_MASK ((uint8_t)((1u << MATRIX_ROWS) - 1)) /* PC0.. */
#define COL_SHIFT 2                                    /* PD2.. */
#define COL_MASK ((uint8_t)(((1u << MATRIX_COLS) - 1) << COL_SHIFT))
#define SR_DATA _BV(PB0)
#define SR_CLOCK _BV(PB1)
#define SR_LATCH _BV(PB2)

#define RX_SIZE 64
#define TX_SIZE 128

static volatile uint32_t millis;
static volatile bool tick;
static volatile uint8_t rx_buf[RX_SIZE];
static volatile uint8_t rx_head, rx_tail;
static volatile uint8_t tx_buf[TX_SIZE];
static volatile uint8_t tx_head, tx_tail;
static uint8_t leds_shown = 0xFF;

/* MCUSR survives here from the reset vector; the watchdog is stopped before main. */
uint8_t mcusr_saved __attribute__((section(".noinit")));
void save_mcusr(void) __attribute__((naked, used, section(".init3")));
void save_mcusr(void) {
    mcusr_saved = MCUSR;
    MCUSR = 0;
    wdt_disable();
}

ISR(TIMER0_COMPA_vect) {
    millis++;
    tick = true;
}

ISR(USART_RX_vect) {
    uint8_t status = UCSR0A;
    uint8_t byte = UDR0;
    uint8_t next = (uint8_t)((rx_head + 1) % RX_SIZE);
    /* A framing error or a full buffer drops the byte; the frame's CRC then fails. */
    if (!(status & _BV(FE0)) && next != rx_tail) {
        rx_buf[rx_head] = byte;
        rx_head = next;
    }
}

ISR(USART_UDRE_vect) {
    if (tx_head == tx_tail) {
        UCSR0B &= (uint8_t)~_BV(UDRIE0);
        return;
    }
    UDR0 = tx_buf[tx_tail];
    tx_tail = (uint8_t)((tx_tail + 1) % TX_SIZE);
}

uint8_t hw_init(void) {
    TCCR0A = _BV(WGM01);
    TCCR0B = _BV(CS01) | _BV(CS00);
    OCR0A = (uint8_t)(F_CPU / 64 / 1000 - 1);
    TIMSK0 = _BV(OCIE0A);

    /* U2X before UBRR: simavr derives its byte time when UBRR0L is written. */
#if USE_2X
    UCSR0A = _BV(U2X0);
#else
    UCSR0A = 0;
#endif
    UBRR0H = UBRRH_VALUE;
    UBRR0L = UBRRL_VALUE;
    UCSR0C = _BV(UCSZ01) | _BV(UCSZ00);
    UCSR0B = _BV(RXEN0) | _BV(TXEN0) | _BV(RXCIE0);

    PORTC |= ROW_MASK;
    DDRC |= ROW_MASK;
    DDRD &= (uint8_t)~COL_MASK;
    PORTD |= COL_MASK;
    DDRB |= SR_DATA | SR_CLOCK | SR_LATCH;
    hw_leds(0);

    set_sleep_mode(SLEEP_MODE_IDLE);
    wdt_enable(WDTO_250MS);
    sei();
    return mcusr_saved;
}

uint32_t hw_millis(void) {
    uint32_t now;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) {
        now = millis;
    }
    return now;
}

bool hw_take_tick(void) {
    bool was;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) {
        was = tick;
        tick = false;
    }
    return was;
}

void hw_scan(matrix_row_t raw[MATRIX_ROWS]) {
    for (uint8_t r = 0; r < MATRIX_ROWS; r++) {
        PORTC = (uint8_t)((PORTC | ROW_MASK) & ~(1u << r));
        _delay_us(3);
        raw[r] = (matrix_row_t)((~PIND & COL_MASK) >> COL_SHIFT);
    }
    PORTC |= ROW_MASK;
}

void hw_leds(uint8_t bits) {
    if (bits == leds_shown) {
        return;
    }
    leds_shown = bits;
    for (int8_t i = 7; i >= 0; i--) {
        if (bits & (1u << i)) {
            PORTB |= SR_DATA;
        } else {
            PORTB &= (uint8_t)~SR_DATA;
        }
        PORTB |= SR_CLOCK;
        PORTB &= (uint8_t)~SR_CLOCK;
    }
    PORTB |= SR_LATCH;
    PORTB &= (uint8_t)~SR_LATCH;
}

int16_t hw_uart_read(void) {
    int16_t byte = -1;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) {
        if (rx_head != rx_tail) {
            byte = rx_buf[rx_tail];
            rx_tail = (uint8_t)((rx_tail + 1) % RX_SIZE);
        }
    }
    return byte;
}

uint8_t hw_uart_room(void) {
    uint8_t used;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) {
        used = (uint8_t)((tx_head - tx_tail + TX_SIZE) % TX_SIZE);
    }
    return (uint8_t)(TX_SIZE - 1 - used);
}

void hw_uart_write(const uint8_t *data, uint8_t len) {
    for (uint8_t i = 0; i < len; i++) {
        tx_buf[tx_head] = data[i];
        ATOMIC_BLOCK(ATOMIC_RESTORESTATE) {
            tx_head = (uint8_t)((tx_head + 1) % TX_SIZE);
        }
    }
    UCSR0B |= _BV(UDRIE0);
}

uint16_t hw_panel_id(void) {
    uint16_t id = eeprom_read_word((const uint16_t *)0);
    return id == 0xFFFF ? PANEL_ID : id;
}

void hw_alive(void) {
    wdt_reset();
}

void hw_idle(void) {
    cli();
    if (!tick && rx_head == rx_tail) {
        sleep_enable();
        sei();
        sleep_cpu();
        sleep_disable();
    }
    sei();
}
