// SPDX-License-Identifier: GPL-2.0
/*
 * umode.c - what the user-level modes share (see umode.h): the memfile's
 * servers, the TCP client of dlm-memserver, placement, ARR, the residency
 * table and the counters.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "../../daemon/wire.h"
#include "umode.h"

typedef unsigned long long ull;

#define UMODE_PAGE_KB_DEFAULT	1024

/* ---- the memory servers ------------------------------------------------- */

/* The server lines of @c's memfile (config.c has checked its format and
 * kept only the sizes): their MB and HOST:PORT into um->srv. */
static int read_servers(const struct dlmlib_config *c, struct dlmlib_umode *um,
			uint64_t *mb)
{
	static const char ws[] = " \t\r\n\v\f";
	char *line = NULL, *save, *size, *addr, *hash;
	unsigned int n = 0, lineno = 0;
	size_t cap = 0;
	int first = 1, ret = 0;
	FILE *f;

	f = fopen(c->memfile, "re");
	if (!f)
		return dlmlib_error(errno, "cannot read memfile '%s': %s",
				    c->memfile, strerror(errno));
	while (n < c->servers && getline(&line, &cap, f) >= 0) {
		lineno++;
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		size = strtok_r(line, ws, &save);
		if (!size)
			continue;
		if (first) {
			first = 0;
			continue;
		}
		addr = strtok_r(NULL, ws, &save);
		if (!addr || strlen(addr) >= UMODE_ADDR_MAX) {
			ret = dlmlib_error(EINVAL,
				"%s:%u: --mode=%s connects to the memory servers itself: give this server line its address, 'MB HOST:PORT'",
				c->memfile, lineno, um->name);
			break;
		}
		mb[n] = strtoull(size, NULL, 10);
		strcpy(um->srv[n].addr, addr);
		n++;
	}
	free(line);
	fclose(f);
	if (!ret && n != c->servers)
		ret = dlmlib_error(EINVAL, "memfile '%s' changed while read",
				   c->memfile);
	return ret;
}

static void set_timeouts(int fd)
{
	struct timeval tv = {
		.tv_sec = UMODE_TIMEOUT_MS / 1000,
		.tv_usec = (UMODE_TIMEOUT_MS % 1000) * 1000,
	};
	int one = 1;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Connect to HOST:PORT or [V6]:PORT: fd, or -1 with the error set. */
static int dial(const char *addr)
{
	char host[UMODE_ADDR_MAX], *port;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int fd = -1, err = 0, gai;

	strcpy(host, addr);
	port = strrchr(host, ':');
	*port++ = '\0';
	if (host[0] == '[') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	gai = getaddrinfo(host, port, &hints, &res);
	if (gai)
		return dlmlib_error(EHOSTUNREACH,
			"memory server %s: %s: fix its name in the memfile",
			addr, gai_strerror(gai));
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		set_timeouts(fd);
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return dlmlib_error(err,
			"cannot connect to memory server %s: %s: start dlm-memserver --listen %s --size MB there (or fix the memfile)",
			addr, strerror(err), addr);
	return fd;
}

/* Send @h (and @len bytes of @data), receive the reply header: its
 * payload length in *rlen.  0 or -errno (EPROTO: a refusal). */
static int call(struct umode_server *s, struct wire_hdr *h, const void *data,
		uint32_t len, uint32_t *rlen, uint32_t *status)
{
	uint8_t hb[WIRE_HDR_SIZE];
	struct iovec iov[2] = {
		{ .iov_base = hb, .iov_len = sizeof(hb) },
		{ .iov_base = (void *)data, .iov_len = len },
	};
	struct wire_hdr r;
	int ret;

	wire_hdr_encode(hb, h);
	ret = wire_sendv(s->fd, iov, len ? 2 : 1);
	if (ret)
		return ret == -EAGAIN ? -ETIMEDOUT : ret;
	ret = wire_recv(s->fd, hb, sizeof(hb), NULL);
	if (ret)
		return ret == -EAGAIN ? -ETIMEDOUT : ret;
	wire_hdr_decode(&r, hb);
	*status = r.status;
	if (r.magic != WIRE_MAGIC || r.op != (h->op | WIRE_OP_REPLY) ||
	    r.tag != h->tag)
		return -EPROTO;
	*rlen = r.len;
	return r.status == WIRE_OK ? 0 : -EPROTO;
}

static int hello(struct dlmlib_umode *um, struct umode_server *s)
{
	struct wire_hdr h = wire_req(WIRE_OP_HELLO, 0, 0, ++um->tag);
	uint8_t b[WIRE_HELLO_SIZE];
	struct wire_hello w;
	uint32_t rlen = 0, st = 0;
	int ret;

	ret = call(s, &h, NULL, 0, &rlen, &st);
	if (!ret && rlen != WIRE_HELLO_SIZE)
		ret = -EPROTO;
	if (!ret)
		ret = wire_recv(s->fd, b, sizeof(b), NULL);
	if (ret)
		return dlmlib_error(-ret,
			"memory server %s does not answer HELLO: %s: is it a dlm-memserver of this version (tcp transport)?",
			s->addr, strerror(-ret));
	wire_hello_decode(&w, b);
	if (w.size < s->slots * um->page)
		return dlmlib_error(ENOSPC,
			"memory server %s serves %llu MB, but the memfile gives it %llu DLM pages of %llu KB: start it with a larger --size or lower its line in the memfile",
			s->addr, (ull)w.size >> 20, (ull)s->slots,
			(ull)um->page >> 10);
	if (w.max_io < um->page)
		return dlmlib_error(EINVAL,
			"memory server %s takes at most %u bytes per transfer, less than a DLM page: lower --page-kb",
			s->addr, w.max_io);
	return 0;
}

static struct umode_server *slot_server(struct dlmlib_umode *um, uint64_t s,
					uint64_t *off)
{
	unsigned int k;

	for (k = 0; k + 1 < um->nsrv; k++)
		if (s < um->srv[k].first + um->srv[k].slots)
			break;
	*off = (s - um->srv[k].first) * um->page;
	return &um->srv[k];
}

static int io_failed(struct dlmlib_umode *um, struct umode_server *s, int err,
		     const char *what, uint64_t p)
{
	if (!um->failed)
		fprintf(stderr,
			"libdlm: --mode=%s: %s of DLM page %llu at memory server %s failed: %s: the server died or did not answer within %d ms; this access and every later fault get SIGBUS (restart the server and the program)\n",
			um->name, what, (ull)p, s->addr, strerror(err),
			UMODE_TIMEOUT_MS);
	um->failed = err;
	return -1;
}

int umode_fetch(struct dlmlib_umode *um, uint64_t p, void *dst)
{
	uint64_t s = um->slot[p], off;
	struct umode_server *srv;
	struct wire_hdr h;
	uint32_t rlen = 0, st = 0;
	int ret;

	if (s == UMODE_NO_SLOT)
		return 0;
	srv = slot_server(um, s, &off);
	h = wire_req(WIRE_OP_READ, (uint32_t)um->page, off, ++um->tag);
	ret = call(srv, &h, NULL, 0, &rlen, &st);
	if (!ret && rlen != um->page)
		ret = -EPROTO;
	if (!ret)
		ret = wire_recv(srv->fd, dst, um->page, NULL);
	if (ret == -EAGAIN)
		ret = -ETIMEDOUT;
	if (ret)
		return io_failed(um, srv, -ret, "READ", p);
	um->slot[p] = UMODE_NO_SLOT;
	um->free_slots[um->nfree++] = s;
	umode_inc(&um->swapins);
	return 1;
}

int umode_store(struct dlmlib_umode *um, uint64_t p, const void *src)
{
	struct umode_server *srv;
	struct wire_hdr h;
	uint32_t rlen = 0, st = 0;
	uint64_t s, off;
	int ret;

	if (!um->nfree) {	/* cannot happen: see umode.h */
		fprintf(stderr, "libdlm: --mode=%s: no free slot on the memory servers\n",
			um->name);
		um->failed = ENOSPC;
		return -1;
	}
	s = um->free_slots[um->nfree - 1];
	srv = slot_server(um, s, &off);
	h = wire_req(WIRE_OP_WRITE, (uint32_t)um->page, off, ++um->tag);
	ret = call(srv, &h, src, (uint32_t)um->page, &rlen, &st);
	if (ret)
		return io_failed(um, srv, -ret, "WRITE", p);
	um->nfree--;
	um->slot[p] = s;
	umode_inc(&um->swapouts);
	return 0;
}

int64_t umode_victim(struct dlmlib_umode *um, uint64_t except)
{
	uint64_t i, p;

	for (i = 0; i < um->npages; i++) {
		p = um->hand;
		um->hand = p + 1 == um->npages ? 0 : p + 1;
		if (um->resident[p] && p != except)
			return (int64_t)p;
	}
	return -1;
}

/* ---- the space -------------------------------------------------------------- */

static uint64_t round_up(uint64_t x, uint64_t to)
{
	return (x + to - 1) / to * to;
}

static void umode_free(struct dlmlib_umode *um)
{
	unsigned int k;

	for (k = 0; um->srv && k < um->nsrv; k++)
		if (um->srv[k].fd >= 0)
			close(um->srv[k].fd);
	free(um->srv);
	free(um->resident);
	free(um->slot);
	free(um->free_slots);
	free(um);
}

/* Sizes, servers and tables of @um from @c: 0 or -1. */
static int plan(const struct dlmlib_config *c, struct dlmlib_umode *um,
		uint64_t *local)
{
	uint64_t *mb = NULL, cpu = (uint64_t)sysconf(_SC_PAGESIZE), s, i;
	unsigned int k;
	int ret = 0;

	um->page = (c->page_kb ? c->page_kb : UMODE_PAGE_KB_DEFAULT) * 1024;
	if (um->page % cpu || um->page > WIRE_MAX_IO)
		return dlmlib_error(EINVAL,
			"%s %llu: the DLM page size must be a multiple of %llu KB up to %u KB",
			c->page_src ? c->page_src : "page size",
			(ull)um->page >> 10, (ull)cpu >> 10, WIRE_MAX_IO >> 10);
	*local = round_up((c->local_mb ? c->local_mb : DLM_DEFAULT_LOCAL_MB) *
			  DLMLIB_MB, um->page);
	um->nsrv = c->servers;
	if (um->nsrv) {
		um->srv = calloc(um->nsrv, sizeof(*um->srv));
		mb = calloc(um->nsrv, sizeof(*mb));
		if (!um->srv || !mb) {
			ret = dlmlib_error(ENOMEM, "no memory for the server table");
			goto out;
		}
		for (k = 0; k < um->nsrv; k++)
			um->srv[k].fd = -1;
		ret = read_servers(c, um, mb);
		if (ret)
			goto out;
	}
	for (k = 0, s = 0; k < um->nsrv; k++) {
		um->srv[k].first = s;
		um->srv[k].slots = mb[k] * DLMLIB_MB / um->page;
		if (!um->srv[k].slots) {
			ret = dlmlib_error(EINVAL,
				"memory server %s: %llu MB hold no DLM page of %llu KB: give it more MB or lower --page-kb",
				um->srv[k].addr, (ull)mb[k], (ull)um->page >> 10);
			goto out;
		}
		s += um->srv[k].slots;
	}
	um->nslots = s;
	um->size = *local + s * um->page;
	um->npages = um->size / um->page;
	um->budget_pages = *local / um->page;
	if (um->size > SIZE_MAX / 2) {
		ret = dlmlib_error(EFBIG, "a DLM space of %llu MB is too large: lower the sizes in the memfile",
				   (ull)um->size >> 20);
		goto out;
	}
	um->resident = calloc(um->npages, 1);
	um->slot = malloc(um->npages * sizeof(*um->slot));
	um->free_slots = malloc((s ? s : 1) * sizeof(*um->free_slots));
	if (!um->resident || !um->slot || !um->free_slots) {
		ret = dlmlib_error(ENOMEM, "no memory for the residency table of %llu DLM pages",
				   (ull)um->npages);
		goto out;
	}
	for (i = 0; i < um->npages; i++)
		um->slot[i] = UMODE_NO_SLOT;
	for (i = 0; i < s; i++)		/* slot 0 on top */
		um->free_slots[i] = s - 1 - i;
	um->nfree = s;
out:
	free(mb);
	return ret;
}

int dlmlib_umode_open(const struct dlmlib_config *c, struct dlmlib_space *sp)
{
	struct dlmlib_umode *um;
	uint64_t local = 0;
	unsigned int k;
	int ret, err;

	*sp = (struct dlmlib_space){ .fd = -1 };
	um = calloc(1, sizeof(*um));
	if (!um)
		return dlmlib_error(ENOMEM, "no memory for the DLM space");
	um->mode = c->mode;
	um->name = c->mode == DLMLIB_MODE_UFFD ? "uffd" : "sigsegv";
	um->verbose = c->verbose;
	um->memfd = um->uffd = um->evfd = -1;
	ret = plan(c, um, &local);
	for (k = 0; !ret && k < um->nsrv; k++) {
		um->srv[k].fd = dial(um->srv[k].addr);
		ret = um->srv[k].fd < 0 ? -1 : hello(um, &um->srv[k]);
	}
	if (!ret)
		ret = um->mode == DLMLIB_MODE_UFFD ? umode_uffd_start(um) :
						     umode_sigsegv_start(um);
	if (ret) {
		err = errno;
		umode_free(um);
		errno = err;
		return -1;
	}
	sp->base = um->base;
	sp->setup = (struct dlm_setup){
		.backing = um->nsrv ? DLM_BACKING_REMOTE : DLM_BACKING_LOCAL,
		.page_size = um->page,
		.total_size = um->size,
		.local_budget = local,
	};
	sp->remote_size = um->nslots * um->page;
	sp->servers = um->nsrv;
	sp->um = um;
	if (um->verbose)
		fprintf(stderr,
			"libdlm: --mode=%s: libdlm pages the space itself (%llu DLM pages, budget %llu), %u memory server(s) over TCP\n",
			um->name, (ull)um->npages, (ull)um->budget_pages,
			um->nsrv);
	return 0;
}

void dlmlib_umode_close(struct dlmlib_space *sp)
{
	struct dlmlib_umode *um = sp->um;

	if (um->mode == DLMLIB_MODE_UFFD)
		umode_uffd_stop(um);
	else
		umode_sigsegv_stop(um);
	umode_free(um);
	*sp = (struct dlmlib_space){ .fd = -1 };
}

void dlmlib_umode_stats(const struct dlmlib_space *sp, struct dlm_lib_stats *st)
{
	struct dlmlib_umode *um = sp->um;
	uint64_t res = umode_ld(&um->nresident);

	st->faults = umode_ld(&um->faults);
	st->populates = umode_ld(&um->populates);
	st->sigbus = umode_ld(&um->sigbus);
	st->swapins = umode_ld(&um->swapins);
	st->swapouts = umode_ld(&um->swapouts);
	st->dpages_resident = res;
	st->bytes_resident = res * um->page;
	st->bytes_mapped = res * um->page;
	st->lost = 0;
}
