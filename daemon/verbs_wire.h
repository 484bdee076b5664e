/* SPDX-License-Identifier: GPL-2.0 */
/*
 * verbs_wire.h - the verbs transport's handshake, carried in rdma_cm
 * private data; shared by dlmd (transport_verbs.c) and dlm-memserver
 * (memserver_verbs.c).
 *
 * dlmd connects an RC queue pair to the memory server with rdma_connect();
 * its private data is a struct verbs_hello_req.  The server answers with
 * rdma_accept() and a struct verbs_hello_rep carrying the one memory
 * region it serves (address, rkey, size), or with rdma_reject() and a rep
 * whose status says why.  From then on the server's CPU is not involved:
 * dlmd moves pages with RDMA READ (swap-in) and RDMA WRITE (swap-out)
 * between that region and its own registered frame pool.
 *
 * Both are little-endian and fit the smallest private data rdma_cm
 * carries (56 bytes for a connect request, 196 for a reply):
 *
 *   request (16 bytes)            reply (32 bytes)
 *    0  4 magic  VERBS_MAGIC       0  4 magic  VERBS_MAGIC
 *    4  2 version VERBS_VERSION    4  2 version VERBS_VERSION
 *    6  2 flags   zero             6  2 status VERBS_OK or VERBS_E_*
 *    8  8 want    bytes wanted     8  8 size   bytes served
 *                                 16  8 addr   region's remote address
 *                                 24  4 rkey   region's remote key
 *                                 28  4 max_io largest READ/WRITE
 *
 * A server refuses a request whose magic, version or flags are wrong
 * (VERBS_E_PROTO / VERBS_E_VERSION), one it cannot register memory for
 * (VERBS_E_NOMEM), and one past its --max-clients (VERBS_E_BUSY).
 */
#ifndef DLM_VERBS_WIRE_H
#define DLM_VERBS_WIRE_H

#include <stdint.h>

#include "wire.h"

#define VERBS_MAGIC		0x56444c4du	/* bytes "MLDV" */
#define VERBS_VERSION		1
#define VERBS_REQ_SIZE		16
#define VERBS_REP_SIZE		32

enum verbs_status {
	VERBS_OK = 0,
	VERBS_E_PROTO = 1,	/* not a dlmd hello */
	VERBS_E_VERSION = 2,	/* version not spoken */
	VERBS_E_NOMEM = 3,	/* the server could not register its memory */
	VERBS_E_BUSY = 4,	/* as many clients as its --max-clients */
};

struct verbs_hello_req {
	uint32_t magic;
	uint16_t version;
	uint16_t flags;
	uint64_t want;
};

struct verbs_hello_rep {
	uint32_t magic;
	uint16_t version;
	uint16_t status;
	uint64_t size;
	uint64_t addr;
	uint32_t rkey;
	uint32_t max_io;
};

static inline void verbs_req_encode(uint8_t *b, const struct verbs_hello_req *r)
{
	wire_put32(b + 0, r->magic);
	wire_put16(b + 4, r->version);
	wire_put16(b + 6, r->flags);
	wire_put64(b + 8, r->want);
}

static inline void verbs_req_decode(struct verbs_hello_req *r, const uint8_t *b)
{
	r->magic = wire_get32(b + 0);
	r->version = wire_get16(b + 4);
	r->flags = wire_get16(b + 6);
	r->want = wire_get64(b + 8);
}

static inline void verbs_rep_encode(uint8_t *b, const struct verbs_hello_rep *r)
{
	wire_put32(b + 0, r->magic);
	wire_put16(b + 4, r->version);
	wire_put16(b + 6, r->status);
	wire_put64(b + 8, r->size);
	wire_put64(b + 16, r->addr);
	wire_put32(b + 24, r->rkey);
	wire_put32(b + 28, r->max_io);
}

static inline void verbs_rep_decode(struct verbs_hello_rep *r, const uint8_t *b)
{
	r->magic = wire_get32(b + 0);
	r->version = wire_get16(b + 4);
	r->status = wire_get16(b + 6);
	r->size = wire_get64(b + 8);
	r->addr = wire_get64(b + 16);
	r->rkey = wire_get32(b + 24);
	r->max_io = wire_get32(b + 28);
}

static inline const char *verbs_status_str(uint16_t s)
{
	switch (s) {
	case VERBS_OK: return "ok";
	case VERBS_E_PROTO: return "not a dlmd hello";
	case VERBS_E_VERSION: return "version not spoken";
	case VERBS_E_NOMEM: return "the server cannot register its memory";
	case VERBS_E_BUSY: return "the server serves as many clients as its --max-clients";
	}
	return "unknown status";
}

#endif /* DLM_VERBS_WIRE_H */
