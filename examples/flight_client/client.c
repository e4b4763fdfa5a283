/* Flight software in the loop: flies one episode of a `rigidrot serve` server with the
 * policy exported by `rigidrot export` (policy.h, policy.c).
 *
 *   flight_client ADDRESS SEED
 *
 * ADDRESS is HOST:PORT (TCP) or a Unix socket path (anything with a '/'). The client reads
 * HELLO, checks the server's sizes against the policy's, sends RESET with SEED, then once a
 * period: rr_policy(observation) -> STEP -> STEP_RESULT, until terminated or truncated; then
 * BYE. It prints one line per period, every float in C99's exact hexadecimal (%a):
 *
 *   reset SEED obs O1 ... On
 *   step K action A1 ... Am obs O1 ... On reward R terminated T truncated U
 *
 * Exit status 0 after the episode; 1 on an ERROR frame (its code and message on stderr),
 * a size mismatch, a policy refusing an observation, or a socket error. C99 and POSIX
 * sockets only, nothing allocated. The frame format is in docs/training.md, "Flight
 * software in the loop"; the build line in examples/flight_client/README.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "policy.h"

#define VERSION 1
#define HELLO 1
#define RESET 2
#define OBSERVATION 3
#define STEP 4
#define STEP_RESULT 5
#define ERROR 6
#define BYE 7

#define N RR_POLICY_OBSERVATION_SIZE
#define M RR_POLICY_ACTION_SIZE
/* The largest payload read: a STEP_RESULT or an ERROR with its message. */
#define MAX_PAYLOAD (4 + 4 * N + 10 + 1024)
/* Seconds a read or write may wait: a silent server ends the flight, never hangs it. */
#define WAIT_S 30

/* Little-endian fields, whatever the host's byte order. */
static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const unsigned char *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static void put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static float get_f32(const unsigned char *p)
{
    uint32_t bits = get_u32(p);
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static double get_f64(const unsigned char *p)
{
    uint64_t bits = get_u64(p);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static int send_all(int fd, const unsigned char *data, size_t count)
{
    while (count > 0) {
        /* MSG_NOSIGNAL: a server gone away is an error return, not SIGPIPE. */
        ssize_t sent = send(fd, data, count, MSG_NOSIGNAL);
        if (sent <= 0) {
            if (sent < 0 && errno == EINTR) {
                continue;
            }
            return -1;
        }
        data += sent;
        count -= (size_t)sent;
    }
    return 0;
}

static int recv_all(int fd, unsigned char *data, size_t count)
{
    while (count > 0) {
        ssize_t got = recv(fd, data, count, 0);
        if (got <= 0) {
            if (got < 0 && errno == EINTR) {
                continue;
            }
            return -1;
        }
        data += got;
        count -= (size_t)got;
    }
    return 0;
}

/* Sends a frame: length, version, type, body. */
static int send_frame(int fd, unsigned type, const unsigned char *body, size_t size)
{
    unsigned char frame[8 + 8 + 4 * M];
    put_u32(frame, (uint32_t)(4 + size));
    frame[4] = VERSION;
    frame[5] = 0;
    frame[6] = (unsigned char)type;
    frame[7] = 0;
    memcpy(frame + 8, body, size);
    return send_all(fd, frame, 8 + size);
}

/* Reads a frame of type `expected` into payload (after version and type); returns its
   body's size, or -1 (an ERROR frame is printed). */
static long recv_frame(int fd, unsigned expected, unsigned char *payload)
{
    unsigned char head[4];
    uint32_t length;
    unsigned version, type;
    if (recv_all(fd, head, 4) != 0) {
        fprintf(stderr, "flight_client: the server closed the connection\n");
        return -1;
    }
    length = get_u32(head);
    if (length < 4 || length > MAX_PAYLOAD || recv_all(fd, payload, length) != 0) {
        fprintf(stderr, "flight_client: a frame of %lu bytes could not be read\n", (unsigned long)length);
        return -1;
    }
    version = payload[0] | payload[1] << 8;
    type = payload[2] | payload[3] << 8;
    if (type == ERROR && length >= 6) {
        fprintf(stderr, "flight_client: server error %u: %.*s\n", payload[4] | payload[5] << 8,
                (int)(length - 6), (const char *)payload + 6);
        return -1;
    }
    if (version != VERSION || type != expected) {
        fprintf(stderr, "flight_client: version %u type %u: expected version %d type %u\n", version, type,
                VERSION, expected);
        return -1;
    }
    memmove(payload, payload + 4, length - 4);
    return (long)(length - 4);
}

static int connect_to(const char *address)
{
    int fd = -1;
    struct timeval wait = {WAIT_S, 0};
    if (strchr(address, '/') != NULL) {
        struct sockaddr_un un;
        memset(&un, 0, sizeof un);
        un.sun_family = AF_UNIX;
        if (strlen(address) >= sizeof un.sun_path) {
            fprintf(stderr, "flight_client: socket path too long: %s\n", address);
            return -1;
        }
        strcpy(un.sun_path, address);
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&un, sizeof un) != 0) {
            perror("flight_client: connect");
            return -1;
        }
    } else {
        char host[256];
        const char *colon = strrchr(address, ':');
        struct addrinfo hints, *found, *ai;
        if (colon == NULL || (size_t)(colon - address) >= sizeof host) {
            fprintf(stderr, "flight_client: %s: expected HOST:PORT or a socket path\n", address);
            return -1;
        }
        memcpy(host, address, (size_t)(colon - address));
        host[colon - address] = '\0';
        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        if (getaddrinfo(host, colon + 1, &hints, &found) != 0) {
            fprintf(stderr, "flight_client: cannot resolve %s\n", address);
            return -1;
        }
        for (ai = found; ai != NULL; ai = ai->ai_next) {
            fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
            if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
                break;
            }
            if (fd >= 0) {
                close(fd);
            }
            fd = -1;
        }
        freeaddrinfo(found);
        if (fd < 0) {
            fprintf(stderr, "flight_client: cannot connect to %s\n", address);
            return -1;
        }
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof wait);
    return fd;
}

static void print_floats(const char *name, const float *values, int count)
{
    int i;
    printf(" %s", name);
    for (i = 0; i < count; ++i) {
        printf(" %a", (double)values[i]);
    }
}

int main(int argc, char **argv)
{
    unsigned char payload[MAX_PAYLOAD];
    unsigned char body[4 * M > 8 ? 4 * M : 8];
    float observation[N], action[M];
    unsigned long long seed;
    long size, step;
    int fd, i, done = 0;
    if (argc != 3) {
        fprintf(stderr, "usage: flight_client HOST:PORT|SOCKET_PATH SEED\n");
        return 1;
    }
    seed = strtoull(argv[2], NULL, 10);
    fd = connect_to(argv[1]);
    if (fd < 0) {
        return 1;
    }
    /* HELLO: u32 n, u32 m, f64 dt, u16 k, the env id. */
    size = recv_frame(fd, HELLO, payload);
    if (size < 18) {
        close(fd);
        return 1;
    }
    if (get_u32(payload) != N || get_u32(payload + 4) != M) {
        fprintf(stderr, "flight_client: the server's env has n = %lu, m = %lu; the policy n = %d, m = %d\n",
                (unsigned long)get_u32(payload), (unsigned long)get_u32(payload + 4), N, M);
        close(fd);
        return 1;
    }
    fprintf(stderr, "flight_client: %.*s, dt = %g s\n", (int)(size - 18), (const char *)payload + 18,
            get_f64(payload + 8));

    for (i = 0; i < 8; ++i) {
        body[i] = (unsigned char)(seed >> (8 * i));
    }
    if (send_frame(fd, RESET, body, 8) != 0 || recv_frame(fd, OBSERVATION, payload) != 4 * N) {
        close(fd);
        return 1;
    }
    for (i = 0; i < N; ++i) {
        observation[i] = get_f32(payload + 4 * i);
    }
    printf("reset %llu", seed);
    print_floats("obs", observation, N);
    printf("\n");

    for (step = 1; !done; ++step) {
        if (rr_policy(observation, action) != 0) {
            fprintf(stderr, "flight_client: the policy refused the observation of step %ld\n", step);
            close(fd);
            return 1;
        }
        for (i = 0; i < M; ++i) {
            uint32_t bits;
            memcpy(&bits, &action[i], sizeof bits);
            put_u32(body + 4 * i, bits);
        }
        if (send_frame(fd, STEP, body, 4 * M) != 0 || recv_frame(fd, STEP_RESULT, payload) != 4 * N + 10) {
            close(fd);
            return 1;
        }
        for (i = 0; i < N; ++i) {
            observation[i] = get_f32(payload + 4 * i);
        }
        printf("step %ld", step);
        print_floats("action", action, M);
        print_floats("obs", observation, N);
        printf(" reward %a terminated %d truncated %d\n", get_f64(payload + 4 * N), payload[4 * N + 8],
               payload[4 * N + 9]);
        done = payload[4 * N + 8] || payload[4 * N + 9];
    }
    /* The server may have closed already (its last episode): BYE is a courtesy. */
    send_frame(fd, BYE, body, 0);
    close(fd);
    return 0;
}
