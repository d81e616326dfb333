/* CRC-16/XMODEM; on the AVR the avr-libc routine, elsewhere its documented C equivalent. */
#include "crc16.h"

#ifdef __AVR__
#include <util/crc16.h>
#endif

uint16_t crc16_update(uint16_t crc, uint8_t byte) {
#ifdef __AVR__
    return _crc_xmodem_update(crc, byte);
#else
    crc ^= (uint16_t)byte << 8;
    for (uint8_t i = 0; i < 8; i++) {
        crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
#endif
}

uint16_t crc16(const uint8_t *data, uint8_t len) {
    uint16_t crc = 0;
    for (uint8_t i = 0; i < len; i++) {
        crc = crc16_update(crc, data[i]);
    }
    return crc;
}
