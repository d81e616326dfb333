/*
 * panel_sim: runs the real panel firmware (.elf) in simavr as an ATmega328P at
 * 16 MHz, paced to the wall clock, and wires it to the outside:
 *
 *   USB serial  <-> a pseudo-terminal (its path is printed, and optionally a
 *                   stable symlink is made to it with --link, so a restarted
 *                   harness is found at the same path);
 *   key matrix  <-  commands on stdin (press, release, taps with bounce);
 *   LEDs        ->  a modelled 74HC595 whose latched outputs are printed.
 *
 * Usage: panel_sim FIRMWARE.elf [--link PATH] [--speed FACTOR] [--trace]
 *   FACTOR 1 (default) runs in real time, 2 twice as fast, 0 unpaced;
 *   --trace also prints every contact change (for latency measurements).
 *
 * stdin, one command a line (times in microseconds of simulated time):
 *   key ROW COL 0|1                       close (1) or open (0) a contact now
 *   tap ROW COL DELAY HOLD BOUNCES        press after DELAY, release HOLD later,
 *                                         each edge preceded by BOUNCES extra
 *                                         open/close pairs 200 us apart
 *   rxnoise HEX                           bytes into the panel's receiver
 *   txnoise HEX                           bytes out to the host, between frames
 *   time                                  reply with the simulated time
 *   quit
 * stdout, one line each:
 *   pty PATH                              once, at start
 *   led TIME HEX                          74HC595 outputs Q7..Q0 after a latch
 *   time TIME                             reply to "time"
 *   key TIME ROW COL 0|1                  a contact changed (only with --trace)
 *   error TEXT                            a command that could not be parsed
 * Rows are seats 0..3 and the operator (row 4); see docs/wiring.md.
 * simavr's own chatter goes to stderr. EOF on stdin ends the harness.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <avr_ioport.h>
#include <avr_uart.h>
#include <sim_avr.h>
#include <sim_elf.h>
#include <sim_irq.h>

#define ROWS 5
#define COLS 5
#define COL_PIN0 2             /* PD2.. */
#define SR_DATA (1u << 0)      /* PB0 */
#define SR_CLOCK (1u << 1)     /* PB1 */
#define SR_LATCH (1u << 2)     /* PB2 */
#define FREQ 16000000u
#define CYCLES_PER_US (FREQ / 1000000u)
#define SLICE_CYCLES (100u * CYCLES_PER_US)
/* One byte per 100 us into the UART: a little under the 115200 wire rate, so
   simavr's 64-byte receive FIFO never fills. */
#define RX_BYTE_CYCLES (100u * CYCLES_PER_US)
#define RX_BURST_MAX 8
#define BOUNCE_US 200u
#define BUF_SIZE 65536

typedef struct {
    uint64_t cycle;
    uint64_t order;
    uint8_t row, col, closed;
} change_t;

static avr_t *avr;
static FILE *ctl;
static avr_irq_t *uart_in;
static avr_irq_t *col_irq[COLS];
static uint8_t keys[ROWS]; /* bit c set: contact at row, column c closed */
static uint8_t rows_port = 0xFF;
static uint8_t portb_prev;
static uint8_t shift_reg;
static int outputs = -1;

static change_t *heap;
static size_t heap_len, heap_cap;
static uint64_t heap_order;

static uint8_t to_host[BUF_SIZE];
static size_t to_host_len;
static uint8_t to_panel[BUF_SIZE];
static size_t to_panel_head, to_panel_len;
static uint64_t next_rx_cycle;
static int master_fd;
static int trace;

static uint64_t sim_us(void) { return avr->cycle / CYCLES_PER_US; }

static uint64_t wall_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void quiet_logger(avr_t *a, const int level, const char *format, va_list ap) {
    (void)a;
    if (level <= LOG_WARNING) {
        vfprintf(stderr, format, ap);
    }
}

/* Drives every column: low while a closed contact joins it to a selected (low) row. */
static void update_columns(void) {
    for (int c = 0; c < COLS; c++) {
        int low = 0;
        for (int r = 0; r < ROWS; r++) {
            if (!(rows_port & (1u << r)) && (keys[r] & (1u << c))) {
                low = 1;
            }
        }
        avr_raise_irq(col_irq[c], low ? 0 : 1);
    }
}

static void on_port_c(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)param;
    rows_port = (uint8_t)value;
    update_columns();
}

/* 74HC595: shift on the clock's rising edge, copy to the outputs on the latch's. */
static void on_port_b(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)param;
    uint8_t v = (uint8_t)value;
    if ((v & SR_CLOCK) && !(portb_prev & SR_CLOCK)) {
        shift_reg = (uint8_t)((shift_reg << 1) | ((v & SR_DATA) ? 1 : 0));
    }
    if ((v & SR_LATCH) && !(portb_prev & SR_LATCH) && outputs != shift_reg) {
        outputs = shift_reg;
        fprintf(ctl, "led %llu %02x\n", (unsigned long long)sim_us(), outputs);
    }
    portb_prev = v;
}

static void on_uart_out(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)param;
    if (to_host_len < BUF_SIZE) {
        to_host[to_host_len++] = (uint8_t)value;
    }
}

/* Idle firmware skips ahead to its next timer; pacing happens in the main loop. */
static void no_sleep(avr_t *a, avr_cycle_count_t how_long) {
    (void)a;
    (void)how_long;
}

static int change_before(const change_t *a, const change_t *b) {
    return a->cycle < b->cycle || (a->cycle == b->cycle && a->order < b->order);
}

static void schedule(uint64_t cycle, int row, int col, int closed) {
    if (heap_len == heap_cap) {
        heap_cap = heap_cap ? heap_cap * 2 : 1024;
        heap = realloc(heap, heap_cap * sizeof *heap);
        if (!heap) {
            perror("panel_sim: realloc");
            exit(1);
        }
    }
    change_t item = {cycle, heap_order++, (uint8_t)row, (uint8_t)col, (uint8_t)closed};
    size_t i = heap_len++;
    while (i > 0 && change_before(&item, &heap[(i - 1) / 2])) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = item;
}

static change_t unschedule(void) {
    change_t top = heap[0];
    change_t last = heap[--heap_len];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= heap_len) {
            break;
        }
        if (child + 1 < heap_len && change_before(&heap[child + 1], &heap[child])) {
            child++;
        }
        if (!change_before(&heap[child], &last)) {
            break;
        }
        heap[i] = heap[child];
        i = child;
    }
    if (heap_len > 0) {
        heap[i] = last;
    }
    return top;
}

static void set_key(int row, int col, int closed) {
    if (trace) {
        fprintf(ctl, "key %llu %d %d %d\n", (unsigned long long)sim_us(), row, col, closed);
    }
    if (closed) {
        keys[row] |= (uint8_t)(1u << col);
    } else {
        keys[row] &= (uint8_t)~(1u << col);
    }
    update_columns();
}

/* Schedules one edge with its bounce: BOUNCES early flips back and forth, then the final state. */
static void schedule_edge(uint64_t at_us, int row, int col, int closed, int bounces) {
    for (int b = 0; b < bounces; b++) {
        schedule((at_us + 2u * b * BOUNCE_US) * CYCLES_PER_US, row, col, closed);
        schedule((at_us + (2u * b + 1) * BOUNCE_US) * CYCLES_PER_US, row, col, !closed);
    }
    schedule((at_us + 2u * bounces * BOUNCE_US) * CYCLES_PER_US, row, col, closed);
}

static int parse_hex(const char *text, uint8_t *out, size_t room) {
    size_t n = 0;
    unsigned byte;
    int used;
    while (sscanf(text, " %2x%n", &byte, &used) == 1) {
        if (n == room) {
            return -1;
        }
        out[n++] = (uint8_t)byte;
        text += used;
    }
    return (int)n;
}

static int in_matrix(int row, int col) { return row >= 0 && row < ROWS && col >= 0 && col < COLS; }

static void command(char *line) {
    int row, col, closed, bounces;
    unsigned long long delay, hold;
    uint8_t bytes[512];
    int n;
    if (sscanf(line, "key %d %d %d", &row, &col, &closed) == 3 && in_matrix(row, col)) {
        set_key(row, col, closed);
    } else if (sscanf(line, "tap %d %d %llu %llu %d", &row, &col, &delay, &hold, &bounces) == 5 &&
               in_matrix(row, col) && bounces >= 0 && bounces < 50) {
        uint64_t start = sim_us() + delay;
        schedule_edge(start, row, col, 1, bounces);
        schedule_edge(start + hold, row, col, 0, bounces);
    } else if (strncmp(line, "rxnoise ", 8) == 0 &&
               (n = parse_hex(line + 8, bytes, sizeof bytes)) >= 0) {
        for (int i = 0; i < n && to_panel_len < BUF_SIZE; i++) {
            to_panel[(to_panel_head + to_panel_len++) % BUF_SIZE] = bytes[i];
        }
    } else if (strncmp(line, "txnoise ", 8) == 0 &&
               (n = parse_hex(line + 8, bytes, sizeof bytes)) >= 0) {
        for (int i = 0; i < n && to_host_len < BUF_SIZE; i++) {
            to_host[to_host_len++] = bytes[i];
        }
    } else if (strcmp(line, "time") == 0) {
        fprintf(ctl, "time %llu\n", (unsigned long long)sim_us());
    } else if (strcmp(line, "quit") == 0) {
        exit(0);
    } else {
        fprintf(ctl, "error cannot parse: %s\n", line);
    }
}

static void read_commands(void) {
    static char line[4096];
    static size_t len;
    char chunk[4096];
    ssize_t got = read(STDIN_FILENO, chunk, sizeof chunk);
    if (got == 0) {
        exit(0);
    }
    if (got < 0) {
        if (errno == EAGAIN || errno == EINTR) {
            return;
        }
        perror("panel_sim: stdin");
        exit(1);
    }
    for (ssize_t i = 0; i < got; i++) {
        if (chunk[i] == '\n') {
            line[len] = 0;
            command(line);
            len = 0;
        } else if (len < sizeof line - 1) {
            line[len++] = chunk[i];
        }
    }
}

/* Moves bytes from the host into the panel's UART at about the wire rate. */
static void feed_uart(void) {
    if (to_panel_len == 0) {
        next_rx_cycle = avr->cycle;
        return;
    }
    if (next_rx_cycle + RX_BURST_MAX * RX_BYTE_CYCLES < avr->cycle) {
        next_rx_cycle = avr->cycle - RX_BURST_MAX * RX_BYTE_CYCLES;
    }
    while (to_panel_len > 0 && next_rx_cycle <= avr->cycle) {
        avr_raise_irq(uart_in, to_panel[to_panel_head]);
        to_panel_head = (to_panel_head + 1) % BUF_SIZE;
        to_panel_len--;
        next_rx_cycle += RX_BYTE_CYCLES;
    }
}

static void read_host(void) {
    uint8_t chunk[4096];
    ssize_t got = read(master_fd, chunk, sizeof chunk);
    for (ssize_t i = 0; i < got && to_panel_len < BUF_SIZE; i++) {
        to_panel[(to_panel_head + to_panel_len++) % BUF_SIZE] = chunk[i];
    }
}

static void write_host(void) {
    if (to_host_len == 0) {
        return;
    }
    /* When the pty is full (the host reads slowly, or not at all) bytes wait here; past
       BUF_SIZE on_uart_out drops them, as a USB-serial bridge with no reader would. */
    ssize_t put = write(master_fd, to_host, to_host_len);
    if (put > 0) {
        memmove(to_host, to_host + put, to_host_len - (size_t)put);
        to_host_len -= (size_t)put;
    }
}

static void open_pty(const char *link) {
    int slave_fd;
    char name[256];
    if (openpty(&master_fd, &slave_fd, name, NULL, NULL) < 0) {
        perror("panel_sim: openpty");
        exit(1);
    }
    struct termios tio;
    tcgetattr(slave_fd, &tio);
    cfmakeraw(&tio);
    tcsetattr(slave_fd, TCSANOW, &tio);
    /* slave_fd stays open so the master never reads EIO when the host closes the port. */
    fcntl(master_fd, F_SETFL, fcntl(master_fd, F_GETFL) | O_NONBLOCK);
    if (link) {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.%d", link, (int)getpid());
        unlink(tmp);
        if (symlink(name, tmp) < 0 || rename(tmp, link) < 0) {
            perror("panel_sim: link");
            exit(1);
        }
    }
    fprintf(ctl, "pty %s\n", name);
}

static avr_irq_t *port_irq(char port, int irq) {
    return avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(port), irq);
}

int main(int argc, char **argv) {
    const char *elf = NULL;
    const char *link = NULL;
    double speed = 1.0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--link") == 0 && i + 1 < argc) {
            link = argv[++i];
        } else if (strcmp(argv[i], "--speed") == 0 && i + 1 < argc) {
            speed = atof(argv[++i]);
        } else if (strcmp(argv[i], "--trace") == 0) {
            trace = 1;
        } else if (!elf && argv[i][0] != '-') {
            elf = argv[i];
        } else {
            elf = NULL;
            break;
        }
    }
    if (!elf || speed < 0) {
        fprintf(stderr, "usage: panel_sim FIRMWARE.elf [--link PATH] [--speed FACTOR] [--trace]\n");
        return 2;
    }
    /* Our replies keep the real stdout; simavr's printf chatter goes to stderr. */
    ctl = fdopen(dup(STDOUT_FILENO), "w");
    dup2(STDERR_FILENO, STDOUT_FILENO);
    setvbuf(ctl, NULL, _IOLBF, 0);
    avr_global_logger_set(quiet_logger);

    elf_firmware_t fw;
    memset(&fw, 0, sizeof fw);
    if (elf_read_firmware(elf, &fw) != 0) {
        fprintf(stderr, "panel_sim: cannot read %s\n", elf);
        return 1;
    }
    avr = avr_make_mcu_by_name("atmega328p");
    if (!avr || avr_init(avr) != 0) {
        fprintf(stderr, "panel_sim: simavr has no atmega328p\n");
        return 1;
    }
    avr_load_firmware(avr, &fw);
    avr->frequency = FREQ;
    avr->log = LOG_WARNING;
    avr->sleep = no_sleep;

    uint32_t flags = 0;
    avr_ioctl(avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
    flags &= ~(uint32_t)(AVR_UART_FLAG_STDIO | AVR_UART_FLAG_POLL_SLEEP);
    avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
    uart_in = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT),
                            on_uart_out, NULL);
    avr_irq_register_notify(port_irq('C', IOPORT_IRQ_REG_PORT), on_port_c, NULL);
    avr_irq_register_notify(port_irq('B', IOPORT_IRQ_REG_PORT), on_port_b, NULL);
    for (int c = 0; c < COLS; c++) {
        col_irq[c] = port_irq('D', COL_PIN0 + c);
        /* Deliver every level, not just changes: a reset clears PIND behind the IRQ's back. */
        col_irq[c]->flags &= ~IRQ_FLAG_FILTERED;
    }

    fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
    open_pty(link);

    uint64_t wall_start = wall_us();
    for (;;) {
        while (heap_len > 0 && heap[0].cycle <= avr->cycle) {
            change_t ch = unschedule();
            set_key(ch.row, ch.col, ch.closed);
        }
        feed_uart();
        uint64_t target = avr->cycle + SLICE_CYCLES;
        if (heap_len > 0 && heap[0].cycle < target) {
            target = heap[0].cycle;
        }
        while (avr->cycle < target) {
            int state = avr_run(avr);
            if (state == cpu_Done || state == cpu_Crashed) {
                fprintf(stderr, "panel_sim: firmware stopped (state %d)\n", state);
                return 1;
            }
        }
        write_host();
        int timeout_ms = 0;
        if (speed > 0) {
            double ahead_us = (double)sim_us() / speed - (double)(wall_us() - wall_start);
            timeout_ms = ahead_us >= 1000.0 ? (int)(ahead_us / 1000.0) : 0;
            if (ahead_us > 0 && timeout_ms == 0) {
                struct timespec pause = {0, (long)(ahead_us * 1000.0)};
                nanosleep(&pause, NULL);
            }
        }
        struct pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {master_fd, POLLIN, 0}};
        if (poll(fds, 2, timeout_ms) > 0) {
            if (fds[0].revents & (POLLIN | POLLHUP)) {
                read_commands();
            }
            if (fds[1].revents & POLLIN) {
                read_host();
            }
        }
    }
}
