/* Main loop: receive, scan once per millisecond, show LEDs, send what is due, sleep. */
#include "hw.h"
#include "panel.h"

static panel_t panel;

int main(void) {
    uint8_t cause = hw_init();
    panel_init(&panel, hw_panel_id(), cause, hw_millis());
    matrix_row_t raw[MATRIX_ROWS];
    uint8_t frame[FRAME_MAX];
    for (;;) {
        hw_alive();
        uint32_t now = hw_millis();
        for (int16_t byte = hw_uart_read(); byte >= 0; byte = hw_uart_read()) {
            panel_rx_byte(&panel, (uint8_t)byte, now);
        }
        if (hw_take_tick()) {
            hw_scan(raw);
            panel_scan(&panel, raw, now);
            hw_leds(panel_led_bits(&panel, now));
        }
        while (hw_uart_room() >= FRAME_MAX) {
            uint8_t n = panel_next_frame(&panel, now, frame);
            if (n == 0) {
                break;
            }
            hw_uart_write(frame, n);
        }
#ifdef PANEL_TEST_HOOKS
        while (panel.hang) {
            /* Stuck with interrupts on: only the watchdog gets out of here. */
        }
#endif
        hw_idle();
    }
}
