// SPDX-License-Identifier: GPL-2.0
/*
 * memserver_verbs.c - dlm-memserver --transport verbs: serve the memory
 * to dlmd by one-sided RDMA.
 *
 * The memory is registered once per RDMA device (remote read and write)
 * and its address, rkey and size go to each dlmd in the rdma_cm accept
 * (verbs_wire.h).  After that this program only handles connection events:
 * the pages move by RDMA READ and WRITE that the device serves without it,
 * which the CPU time logged at exit shows.
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "memserver_verbs.h"
#include "verbs_util.h"
#include "verbs_wire.h"

#define MAX_DEVICES	8
#define LISTEN_BACKLOG	16

struct vdev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;		/* the queue pairs need one; unused */
	struct ibv_mr *mr;
	int max_rd_atom;
};

struct vclient {
	struct rdma_cm_id *id;
	char peer[NETADDR_STR_MAX];
	int established;
	struct vclient *next;
};

static struct {
	uint8_t *mem;
	uint64_t size;
	struct vdev dev[MAX_DEVICES];
	unsigned int ndev;
	struct vclient *clients;
	unsigned int nclients, max_clients;
	uint64_t conns, refused;
} vs;

void memserver_verbs_counters(const char *msg)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	log_info(msg, "transport=verbs clients=%u conns=%" PRIu64 " refused=%"
		 PRIu64 " cpu_user_ms=%ld cpu_sys_ms=%ld", vs.nclients,
		 vs.conns, vs.refused,
		 ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000,
		 ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000);
}

static void peer_str(struct rdma_cm_id *id, char *buf, size_t len)
{
	struct sockaddr *sa = rdma_get_peer_addr(id);
	char host[NETADDR_HOST_MAX];

	if (!sa || getnameinfo(sa, sa->sa_family == AF_INET6 ?
			       sizeof(struct sockaddr_in6) :
			       sizeof(struct sockaddr_in),
			       host, sizeof(host), NULL, 0, NI_NUMERICHOST))
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, "%s%s%s:%u", sa->sa_family == AF_INET6 ?
			 "[" : "", host, sa->sa_family == AF_INET6 ? "]" : "",
			 ntohs(rdma_get_dst_port(id)));
}

/* The registration for CTX, made on first use; NULL with ERR set. */
static struct vdev *get_dev(struct ibv_context *ctx, char *err,
			    size_t errlen)
{
	struct ibv_device_attr attr;
	struct timespec t0, t1;
	struct vdev *d;
	unsigned int i;
	int e;

	for (i = 0; i < vs.ndev; i++)
		if (vs.dev[i].ctx == ctx)
			return &vs.dev[i];
	if (vs.ndev == MAX_DEVICES) {
		snprintf(err, errlen, "more than %d RDMA devices", MAX_DEVICES);
		return NULL;
	}
	if (verbs_check_caps(ctx, &attr, err, errlen))
		return NULL;
	d = &vs.dev[vs.ndev];
	d->ctx = ctx;
	d->max_rd_atom = attr.max_qp_rd_atom;
	d->pd = ibv_alloc_pd(ctx);
	d->cq = d->pd ? ibv_create_cq(ctx, 2, NULL, NULL, 0) : NULL;
	if (!d->cq) {
		snprintf(err, errlen, "%s: cannot allocate a %s: %s",
			 ibv_get_device_name(ctx->device),
			 d->pd ? "completion queue" : "protection domain",
			 strerror(errno));
		goto free;
	}
	if (vs.size > attr.max_mr_size) {
		snprintf(err, errlen, "%s: %" PRIu64 " MB is more than the device registers in one region (max_mr_size %" PRIu64 " MB): lower --size",
			 ibv_get_device_name(ctx->device), vs.size >> 20,
			 (uint64_t)attr.max_mr_size >> 20);
		goto free;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	d->mr = ibv_reg_mr(d->pd, vs.mem, vs.size, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!d->mr) {
		e = errno;
		snprintf(err, errlen, "cannot register %" PRIu64 " MB with %s for RDMA: %s: %s",
			 vs.size >> 20, ibv_get_device_name(ctx->device),
			 strerror(e), verbs_reg_hint(e));
		goto free;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	log_info("memory registered", "device=%s bytes=%" PRIu64 " ms=%ld",
		 ibv_get_device_name(ctx->device), vs.size,
		 (t1.tv_sec - t0.tv_sec) * 1000 +
		 (t1.tv_nsec - t0.tv_nsec) / 1000000);
	vs.ndev++;
	return d;
free:
	if (d->cq)
		ibv_destroy_cq(d->cq);
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	memset(d, 0, sizeof(*d));
	return NULL;
}

static void reject(struct rdma_cm_id *id, uint16_t status)
{
	struct verbs_hello_rep rep = {
		.magic = VERBS_MAGIC, .version = VERBS_VERSION,
		.status = status,
	};
	uint8_t priv[VERBS_REP_SIZE];

	verbs_rep_encode(priv, &rep);
	rdma_reject(id, priv, sizeof(priv));
	vs.refused++;
}

static void client_free(struct vclient *c)
{
	struct vclient **pp;

	for (pp = &vs.clients; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			vs.nclients--;
			break;
		}
	}
	if (c->id->qp)
		rdma_destroy_qp(c->id);
	rdma_destroy_id(c->id);
	free(c);
}

static struct vclient *client_of(struct rdma_cm_id *id)
{
	struct vclient *c;

	for (c = vs.clients; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

/*
 * Accept or refuse the connection of EV (before EV is acked: its private
 * data goes with it).  0, or what to free once EV is acked: 1 the id,
 * 2 the client.
 */
static int connect_request(struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	const struct rdma_conn_param *in = &ev->param.conn;
	struct ibv_qp_init_attr qa = { 0 };
	struct rdma_conn_param cp = { 0 };
	struct verbs_hello_req req = { 0 };
	struct verbs_hello_rep rep = {
		.magic = VERBS_MAGIC, .version = VERBS_VERSION,
	};
	uint8_t priv[VERBS_REP_SIZE];
	char peer[NETADDR_STR_MAX], err[512];
	struct vclient *c;
	struct vdev *d;

	peer_str(id, peer, sizeof(peer));
	if (in->private_data_len >= VERBS_REQ_SIZE)
		verbs_req_decode(&req, in->private_data);
	if (req.magic != VERBS_MAGIC || req.flags) {
		log_warn("refused a connection: not a dlmd", "peer=%s", peer);
		reject(id, VERBS_E_PROTO);
		return 1;
	}
	if (req.version != VERBS_VERSION) {
		log_warn("refused a connection: verbs protocol version not spoken",
			 "peer=%s version=%u", peer, req.version);
		reject(id, VERBS_E_VERSION);
		return 1;
	}
	if (vs.nclients >= vs.max_clients) {
		log_warn("refused a connection: as many clients as --max-clients",
			 "peer=%s clients=%u max_clients=%u", peer, vs.nclients,
			 vs.max_clients);
		reject(id, VERBS_E_BUSY);
		return 1;
	}
	d = get_dev(id->verbs, err, sizeof(err));
	if (!d) {
		log_error("refused a connection: cannot serve the memory over RDMA",
			  "peer=%s err=\"%s\"", peer, err);
		reject(id, VERBS_E_NOMEM);
		return 1;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		reject(id, VERBS_E_NOMEM);
		return 1;
	}
	qa.send_cq = d->cq;
	qa.recv_cq = d->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 1;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, d->pd, &qa)) {
		log_error("refused a connection: cannot create a queue pair",
			  "peer=%s err=\"%s\"", peer, strerror(errno));
		free(c);
		reject(id, VERBS_E_NOMEM);
		return 1;
	}
	rep.size = vs.size;
	rep.addr = (uintptr_t)vs.mem;
	rep.rkey = d->mr->rkey;
	rep.max_io = WIRE_MAX_IO;
	verbs_rep_encode(priv, &rep);
	cp.private_data = priv;
	cp.private_data_len = sizeof(priv);
	/*
	 * dlmd's RDMA READs in flight, as many as the device serves (the
	 * request event swaps the sides: its responder_resources is the
	 * peer's initiator depth).
	 */
	cp.responder_resources = in->responder_resources < d->max_rd_atom ?
				 in->responder_resources :
				 (uint8_t)d->max_rd_atom;
	cp.initiator_depth = 0;
	cp.rnr_retry_count = 7;
	c->id = id;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	c->next = vs.clients;
	vs.clients = c;
	vs.nclients++;
	vs.conns++;
	if (rdma_accept(id, &cp)) {
		log_error("cannot accept a connection", "peer=%s err=\"%s\"",
			  peer, strerror(errno));
		return 2;
	}
	return 0;
}

/* One rdma_cm event of the listener or a client. */
static void cm_event(struct rdma_event_channel *ec)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	enum rdma_cm_event_type type;
	struct vclient *c;

	if (verbs_next_event(ec, 0, &ev))
		return;
	type = ev->event;
	id = ev->id;
	if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* An id is destroyed only once its events are acked. */
		int undo = connect_request(ev);

		rdma_ack_cm_event(ev);
		if (undo == 1)
			rdma_destroy_id(id);
		else if (undo == 2)
			client_free(client_of(id));
		return;
	}
	rdma_ack_cm_event(ev);
	c = client_of(id);
	if (!c) {
		log_debug("rdma_cm event", "event=%s", rdma_event_str(type));
		return;
	}
	switch (type) {
	case RDMA_CM_EVENT_ESTABLISHED:
		c->established = 1;
		log_info("client connected", "peer=%s transport=verbs", c->peer);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		log_info("client disconnected", "peer=%s", c->peer);
		rdma_disconnect(id);
		client_free(c);
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		log_warn("connection failed", "peer=%s event=%s", c->peer,
			 rdma_event_str(type));
		client_free(c);
		break;
	default:
		log_debug("rdma_cm event", "peer=%s event=%s", c->peer,
			  rdma_event_str(type));
	}
}

/* The listener: its event channel is what main polls. */
static struct rdma_event_channel *ec;
static struct rdma_cm_id *lid;

int memserver_verbs_listen(const struct netaddr *addr, uint8_t *mem,
			   uint64_t size, unsigned int max_clients)
{
	struct sockaddr_storage ss;
	char err[512], bound[NETADDR_STR_MAX];
	struct netaddr b;

	vs.mem = mem;
	vs.size = size;
	vs.max_clients = max_clients;
	if (verbs_check_devices(err, sizeof(err)) ||
	    verbs_sockaddr(addr, &ss, err, sizeof(err))) {
		fprintf(stderr, "dlm-memserver: %s\n", err);
		return -1;
	}
	ec = rdma_create_event_channel();
	if (!ec || rdma_create_id(ec, &lid, NULL, RDMA_PS_TCP)) {
		fprintf(stderr, "dlm-memserver: rdma_cm: %s (is the rdma_ucm module loaded? modprobe rdma_ucm)\n",
			strerror(errno));
		return -1;
	}
	if (rdma_bind_addr(lid, (struct sockaddr *)&ss) ||
	    rdma_listen(lid, LISTEN_BACKLOG)) {
		fprintf(stderr, "dlm-memserver: cannot listen for RDMA on %s:%s: %s%s\n",
			addr->host, addr->port, strerror(errno),
			errno == EADDRNOTAVAIL || errno == ENODEV ?
			" (no RDMA device has that address: ibv_devices; rdma link)" :
			errno == EADDRINUSE ? " (port taken; pick another)" : "");
		return -1;
	}
	/* Bound to one device's address: register now, fail early. */
	if (lid->verbs && !get_dev(lid->verbs, err, sizeof(err))) {
		fprintf(stderr, "dlm-memserver: %s\n", err);
		return -1;
	}
	b = *addr;
	snprintf(b.port, sizeof(b.port), "%u", ntohs(rdma_get_src_port(lid)));
	log_info("listening", "addr=%s size=%" PRIu64 " max_io=%u transport=verbs pid=%d",
		 netaddr_str(&b, bound, sizeof(bound)), size, WIRE_MAX_IO,
		 (int)getpid());
	return ec->fd;
}

void memserver_verbs_event(void)
{
	cm_event(ec);
}

void memserver_verbs_stop(void)
{
	unsigned int i;

	while (vs.clients) {
		rdma_disconnect(vs.clients->id);
		client_free(vs.clients);
	}
	if (lid)
		rdma_destroy_id(lid);
	for (i = 0; i < vs.ndev; i++) {
		ibv_dereg_mr(vs.dev[i].mr);
		ibv_destroy_cq(vs.dev[i].cq);
		ibv_dealloc_pd(vs.dev[i].pd);
	}
	vs.ndev = 0;
	if (ec)
		rdma_destroy_event_channel(ec);
	lid = NULL;
	ec = NULL;
}
