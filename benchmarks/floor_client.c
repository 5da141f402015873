/* The least a client can do per request: the floor under any load generator's CPU (issue 39).
 *
 * One thread, one epoll set, CONC keep-alive connections. Each connection sends one prepared request (the same
 * bytes every time: no signing, no key choice, no statistics), reads its answer and sends again. Per request: one
 * write, one read (two when the answer's body spans reads), and a share of one epoll_wait. No S3 or Swift client
 * can do less work per request than this over the same kernel path, so its CPU per request is the bound
 * cephbench-loadgen is measured against (benchmarks/bench_loadgen.py).
 *
 * usage: floor_client HOST PORT METHOD PATH BODY_BYTES CONC SECONDS MAX_REQUESTS
 *   it stops after SECONDS or once MAX_REQUESTS answers came (0: no bound), whichever is first;
 *   FLOOR_CLIENT_HEADERS in the environment: more header lines, "Name: value" each, newline-separated (Swift's
 *   X-Auth-Token: in the environment rather than the command line, which any user's ps shows).
 * prints: "requests N errors E seconds S" on stdout; exit 1 when no request succeeded, 2 on bad arguments.
 * Answers must carry Content-Length (RGW's and the null server's do); a non-2xx status counts as an error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUF (64 * 1024)

struct conn {
    int fd;
    char buf[BUF];
    size_t have;        /* bytes in buf */
    long body_left;     /* -1: still reading the head */
    int status;
};

static char *req;
static size_t req_len;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int send_all(int fd) {
    size_t off = 0;
    while (off < req_len) {
        ssize_t n = write(fd, req + off, req_len - off);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return -1;
        }
        off += (size_t)n;
    }
    return 0;
}

/* 1: an answer is complete, 0: more to read, -1: broken */
static int consume(struct conn *c) {
    if (c->body_left < 0) {
        char *end = memmem(c->buf, c->have, "\r\n\r\n", 4);
        if (!end) return c->have == BUF ? -1 : 0;
        size_t head = (size_t)(end - c->buf) + 4;
        c->status = atoi(c->buf + 9);       /* "HTTP/1.1 200 ..." */
        long len = 0;
        for (char *p = c->buf; p < end; p++) {
            if ((p == c->buf || p[-1] == '\n') && strncasecmp(p, "Content-Length:", 15) == 0) {
                len = strtol(p + 15, NULL, 10);
                break;
            }
        }
        c->body_left = len;
        memmove(c->buf, c->buf + head, c->have - head);
        c->have -= head;
    }
    if ((long)c->have >= c->body_left) {
        c->have -= (size_t)c->body_left;      /* no pipelining: nothing follows the body */
        memmove(c->buf, c->buf + c->body_left, c->have);
        return 1;
    }
    c->body_left -= (long)c->have;
    c->have = 0;
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 9) {
        fprintf(stderr, "usage: floor_client HOST PORT METHOD PATH BODY_BYTES CONC SECONDS MAX_REQUESTS\n");
        return 2;
    }
    const char *host = argv[1], *port = argv[2], *method = argv[3], *path = argv[4];
    long body = atol(argv[5]);
    int conc = atoi(argv[6]);
    double seconds = atof(argv[7]);
    long max_requests = atol(argv[8]);
    if (body < 0 || conc < 1 || seconds <= 0 || max_requests < 0) {
        fprintf(stderr, "floor_client: BODY_BYTES >= 0, CONC >= 1, SECONDS > 0 and MAX_REQUESTS >= 0 please\n");
        return 2;
    }
    const char *extra = getenv("FLOOR_CLIENT_HEADERS");
    if (!extra) extra = "";
    size_t cap = 4096 + strlen(extra) * 2 + (size_t)body;
    req = malloc(cap);
    int n = snprintf(req, cap, "%s %s HTTP/1.1\r\nHost: %s:%s\r\nContent-Length: %ld\r\n", method, path, host, port,
                     body);
    for (const char *line = extra; *line;) {
        size_t len = strcspn(line, "\n");
        if (len) n += snprintf(req + n, cap - n, "%.*s\r\n", (int)len, line);
        line += len + (line[len] == '\n');
    }
    n += snprintf(req + n, cap - n, "\r\n");
    memset(req + n, 'x', (size_t)body);
    req_len = (size_t)n + (size_t)body;

    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai;
    if (getaddrinfo(host, port, &hints, &ai) != 0) {
        fprintf(stderr, "floor_client: cannot resolve %s:%s\n", host, port);
        return 2;
    }
    int ep = epoll_create1(0);
    struct conn *cs = calloc((size_t)conc, sizeof *cs);
    for (int i = 0; i < conc; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            perror("floor_client: connect");
            return 1;
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        cs[i].fd = fd;
        cs[i].body_left = -1;
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &cs[i]};
        epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
    }
    long done = 0, errors = 0, sent = conc;
    double start = now(), stop = start + seconds;
    for (int i = 0; i < conc; i++)
        if (send_all(cs[i].fd) != 0) return 1;
    struct epoll_event evs[256];
    int open = conc;
    while (open > 0) {
        int k = epoll_wait(ep, evs, 256, 1000);
        if (k < 0 && errno == EINTR) continue;
        double t = now();
        for (int j = 0; j < k; j++) {
            struct conn *c = evs[j].data.ptr;
            ssize_t r = read(c->fd, c->buf + c->have, BUF - c->have);
            if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
            if (r <= 0) {
                errors++;
                close(c->fd);
                open--;
                continue;
            }
            c->have += (size_t)r;
            int st = consume(c);
            if (st < 0) {
                errors++;
                close(c->fd);
                open--;
                continue;
            }
            if (st == 0) continue;
            if (c->status >= 200 && c->status < 300) done++; else errors++;
            c->body_left = -1;
            if (t >= stop || (max_requests && sent >= max_requests)) {     /* this connection sends no more */
                close(c->fd);
                open--;
            } else if (sent++, send_all(c->fd) != 0) {
                errors++;
                close(c->fd);
                open--;
            }
        }
        if (k == 0 && t >= stop + 5) break;       /* an answer that never came */
    }
    printf("requests %ld errors %ld seconds %.3f\n", done, errors, now() - start);
    return done > 0 ? 0 : 1;
}
