// SPDX-License-Identifier: GPL-2.0
/*
 * awg_link_verbs.c - awgstard's RDMA links (rdma-core): one RC queue pair
 * per node, the token moved by two-sided SEND into a registered receive
 * buffer that is posted again as soon as the token has been copied out.
 * The ring is strictly one token passed hub -> node -> hub, so one receive
 * posted per link is enough; rnr_retry 7 covers the instant between a
 * completion and the next post.  The hello travels as the connection's
 * private data.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "awg_link.h"
#include "log.h"
#include "verbs_util.h"

struct verbs_link {
	struct awg_link l;
	struct rdma_cm_id *id;
	struct rdma_event_channel *ec;	/* own (connecting side) or NULL */
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_mr *smr, *rmr;
	char *sbuf, *rbuf;
	uint32_t cap;
	int recv_ready, send_done;
	uint32_t recv_len;
};

/* Nodes accepted but not yet established, with what they said. */
#define PENDING_MAX	64

struct verbs_listener {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct verbs_link *pending[PENDING_MAX];
	struct awg_hello hello[PENDING_MAX];
};

static int post_recv(struct verbs_link *v)
{
	struct ibv_sge sge = { (uintptr_t)v->rbuf, v->cap, v->rmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return -ibv_post_recv(v->id->qp, &wr, &bad);
}

/* Reap completions until `want` (recv_ready or send_done) or the deadline. */
static int wait_cq(struct verbs_link *v, int *want, long long deadline)
{
	for (;;) {
		struct ibv_wc wc[4];
		struct pollfd pfd = { .fd = v->ch->fd, .events = POLLIN };
		struct ibv_cq *cq;
		void *ctx;
		int n, i, left;

		n = ibv_poll_cq(v->cq, 4, wc);
		if (n < 0)
			return -EIO;
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				log_warn("awgstard: RDMA completion failed",
					 "peer=%s status=%s", v->l.peer,
					 ibv_wc_status_str(wc[i].status));
				return -ECONNRESET;
			}
			if (wc[i].opcode == IBV_WC_RECV) {
				v->recv_ready = 1;
				v->recv_len = wc[i].byte_len;
			} else {
				v->send_done = 1;
			}
		}
		if (*want)
			return 0;
		if (n)
			continue;
		left = deadline < 0 ? -1 : (int)(deadline - awg_now_ms());
		if (deadline >= 0 && left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, left) < 0 && errno != EINTR)
			return -errno;
		if ((pfd.revents & POLLIN) && !ibv_get_cq_event(v->ch, &cq, &ctx)) {
			ibv_ack_cq_events(cq, 1);
			ibv_req_notify_cq(cq, 0);
		}
	}
}

static int verbs_send(struct awg_link *l, const void *buf, uint32_t len)
{
	struct verbs_link *v = (struct verbs_link *)l;
	struct ibv_sge sge = { (uintptr_t)v->sbuf, len, v->smr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	int r;

	if (len > v->cap)
		return -EMSGSIZE;
	memcpy(v->sbuf, buf, len);
	v->send_done = 0;
	r = ibv_post_send(v->id->qp, &wr, &bad);
	if (r)
		return -r;
	return wait_cq(v, &v->send_done, awg_now_ms() + 30000);
}

static int verbs_recv(struct awg_link *l, void *buf, uint32_t cap,
		      uint32_t *len, int timeout_ms)
{
	struct verbs_link *v = (struct verbs_link *)l;
	int r;

	r = wait_cq(v, &v->recv_ready, timeout_ms < 0 ? -1 :
		    awg_now_ms() + timeout_ms);
	if (r)
		return r;
	v->recv_ready = 0;
	if (v->recv_len > cap)
		return -EMSGSIZE;
	memcpy(buf, v->rbuf, v->recv_len);
	*len = v->recv_len;
	return post_recv(v);
}

static void verbs_close(struct awg_link *l)
{
	struct verbs_link *v = (struct verbs_link *)l;

	if (v->id) {
		rdma_disconnect(v->id);
		if (v->id->qp)
			rdma_destroy_qp(v->id);
	}
	if (v->smr)
		ibv_dereg_mr(v->smr);
	if (v->rmr)
		ibv_dereg_mr(v->rmr);
	if (v->cq)
		ibv_destroy_cq(v->cq);
	if (v->ch)
		ibv_destroy_comp_channel(v->ch);
	if (v->pd)
		ibv_dealloc_pd(v->pd);
	if (v->id)
		rdma_destroy_id(v->id);
	if (v->ec)
		rdma_destroy_event_channel(v->ec);
	free(v->sbuf);
	free(v->rbuf);
	free(v);
}

static const struct awg_link_ops verbs_ops = {
	.send = verbs_send,
	.recv = verbs_recv,
	.close = verbs_close,
};

/* Protection domain, CQ, RC QP, two registered buffers, a posted receive. */
static int setup(struct verbs_link *v, uint32_t max_msg, char *err,
		 size_t errlen)
{
	struct ibv_qp_init_attr qa = { 0 };
	struct ibv_context *ctx = v->id->verbs;

	v->l.ops = &verbs_ops;
	v->cap = max_msg;
	v->pd = ibv_alloc_pd(ctx);
	v->ch = v->pd ? ibv_create_comp_channel(ctx) : NULL;
	v->cq = v->ch ? ibv_create_cq(ctx, 8, v, v->ch, 0) : NULL;
	if (!v->cq || ibv_req_notify_cq(v->cq, 0)) {
		snprintf(err, errlen, "%s: cannot allocate a protection domain or completion queue: %s",
			 ibv_get_device_name(ctx->device), strerror(errno));
		return -ENOMEM;
	}
	qa.send_cq = v->cq;
	qa.recv_cq = v->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 2;
	qa.cap.max_recv_wr = 2;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(v->id, v->pd, &qa)) {
		snprintf(err, errlen, "cannot create an RC queue pair: %s",
			 strerror(errno));
		return -errno;
	}
	v->sbuf = malloc(max_msg);
	v->rbuf = malloc(max_msg);
	if (!v->sbuf || !v->rbuf)
		return -ENOMEM;
	v->smr = ibv_reg_mr(v->pd, v->sbuf, max_msg, IBV_ACCESS_LOCAL_WRITE);
	v->rmr = v->smr ? ibv_reg_mr(v->pd, v->rbuf, max_msg,
				     IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!v->rmr) {
		snprintf(err, errlen, "cannot register %u bytes: %s (%s)", max_msg,
			 strerror(errno), verbs_reg_hint(errno));
		return -errno;
	}
	return post_recv(v);
}

/* The next cm event, which must be `want`. */
static int expect_event(struct rdma_event_channel *ec, enum rdma_cm_event_type want,
			int timeout_ms, char *err, size_t errlen)
{
	struct rdma_cm_event *ev;
	int r = verbs_next_event(ec, timeout_ms, &ev);

	if (r) {
		snprintf(err, errlen, "waiting for %s: %s", rdma_event_str(want),
			 strerror(-r));
		return r;
	}
	if (ev->event != want) {
		snprintf(err, errlen, "wanted %s, got %s (status %d)%s",
			 rdma_event_str(want), rdma_event_str(ev->event),
			 ev->status, ev->event == RDMA_CM_EVENT_REJECTED ?
			 ": is awgstard --listen running there, with --transport verbs?" : "");
		rdma_ack_cm_event(ev);
		return -ECONNREFUSED;
	}
	rdma_ack_cm_event(ev);
	return 0;
}

static void conn_param(struct rdma_conn_param *cp, const void *priv,
		       uint8_t len)
{
	memset(cp, 0, sizeof(*cp));
	cp->private_data = priv;
	cp->private_data_len = len;
	cp->retry_count = 7;
	cp->rnr_retry_count = 7;	/* infinite: a receive is always reposted */
}

int awg_verbs_listen(const struct netaddr *a, struct awg_listener *ls,
		     char *err, size_t errlen)
{
	struct verbs_listener *vl = calloc(1, sizeof(*vl));
	struct sockaddr_storage ss;
	int r;

	if (!vl)
		return -ENOMEM;
	ls->priv = vl;
	r = verbs_check_devices(err, errlen);
	if (r)
		return r;
	r = verbs_sockaddr(a, &ss, err, errlen);
	if (r)
		return r;
	vl->ec = rdma_create_event_channel();
	if (!vl->ec || rdma_create_id(vl->ec, &vl->id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(vl->id, (struct sockaddr *)&ss) ||
	    rdma_listen(vl->id, 32)) {
		char s[NETADDR_STR_MAX];

		snprintf(err, errlen, "cannot listen for RDMA on %s: %s",
			 netaddr_str(a, s, sizeof(s)), strerror(errno));
		return -errno;
	}
	return 0;
}

void awg_verbs_listener_close(struct awg_listener *ls)
{
	struct verbs_listener *vl = ls->priv;

	int i;

	if (!vl)
		return;
	for (i = 0; i < PENDING_MAX; i++)
		if (vl->pending[i])
			verbs_close(&vl->pending[i]->l);
	if (vl->id)
		rdma_destroy_id(vl->id);
	if (vl->ec)
		rdma_destroy_event_channel(vl->ec);
	free(vl);
	ls->priv = NULL;
}

/* A connection request: set up its queue pair and accept; pending until established. */
static void on_request(struct verbs_listener *vl, struct rdma_cm_event *ev,
		       uint32_t max_msg)
{
	struct rdma_conn_param cp;
	struct verbs_link *v;
	char err[256] = "";
	int i;

	for (i = 0; i < PENDING_MAX && vl->pending[i]; i++)
		;
	v = i < PENDING_MAX ? calloc(1, sizeof(*v)) : NULL;
	if (!v) {
		rdma_reject(ev->id, NULL, 0);
		return;
	}
	v->id = ev->id;
	memset(&vl->hello[i], 0, sizeof(vl->hello[i]));
	if (ev->param.conn.private_data_len >= sizeof(vl->hello[i]))
		memcpy(&vl->hello[i], ev->param.conn.private_data,
		       sizeof(vl->hello[i]));
	snprintf(v->l.peer, sizeof(v->l.peer), "rdma node %u",
		 vl->hello[i].node_id);
	conn_param(&cp, NULL, 0);
	if (setup(v, max_msg, err, sizeof(err)) || rdma_accept(v->id, &cp)) {
		log_warn("awgstard: cannot accept an RDMA connection", "peer=%s err=\"%s\"",
			 v->l.peer, *err ? err : strerror(errno));
		verbs_close(&v->l);
		return;
	}
	vl->pending[i] = v;
}

int awg_verbs_accept(struct awg_listener *ls, int timeout_ms, uint32_t max_msg,
		     struct awg_link **out, struct awg_hello *hello, char *err,
		     size_t errlen)
{
	struct verbs_listener *vl = ls->priv;
	long long deadline = awg_now_ms() + timeout_ms;

	for (;;) {
		struct rdma_cm_event *ev;
		int r, i, left = (int)(deadline - awg_now_ms());

		if (left <= 0 ||
		    (r = verbs_next_event(vl->ec, left, &ev)) == -ETIMEDOUT) {
			snprintf(err, errlen, "no node joined within %d ms", timeout_ms);
			return -ETIMEDOUT;
		}
		if (r) {
			snprintf(err, errlen, "rdma_cm: %s", strerror(-r));
			return r;
		}
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			on_request(vl, ev, max_msg);
			rdma_ack_cm_event(ev);
			continue;
		}
		for (i = 0; i < PENDING_MAX; i++)
			if (vl->pending[i] && vl->pending[i]->id == ev->id)
				break;
		if (i == PENDING_MAX) {
			rdma_ack_cm_event(ev);	/* of an established link */
			continue;
		}
		if (ev->event == RDMA_CM_EVENT_ESTABLISHED) {
			rdma_ack_cm_event(ev);
			*out = &vl->pending[i]->l;
			*hello = vl->hello[i];
			vl->pending[i] = NULL;
			return 0;
		}
		log_warn("awgstard: a joining node went away", "peer=%s event=%s",
			 vl->pending[i]->l.peer, rdma_event_str(ev->event));
		rdma_ack_cm_event(ev);
		verbs_close(&vl->pending[i]->l);
		vl->pending[i] = NULL;
	}
}

int awg_verbs_connect(const struct netaddr *a, const struct awg_hello *hello,
		      int timeout_ms, uint32_t max_msg, struct awg_link **out,
		      char *err, size_t errlen)
{
	struct rdma_conn_param cp;
	struct sockaddr_storage ss;
	struct verbs_link *v;
	int r;

	r = verbs_check_devices(err, errlen);
	if (r)
		return r;
	r = verbs_sockaddr(a, &ss, err, errlen);
	if (r)
		return r;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	netaddr_str(a, v->l.peer, sizeof(v->l.peer));
	v->ec = rdma_create_event_channel();
	if (!v->ec || rdma_create_id(v->ec, &v->id, NULL, RDMA_PS_TCP)) {
		snprintf(err, errlen, "rdma_create_id: %s", strerror(errno));
		verbs_close(&v->l);
		return -ENODEV;
	}
	r = rdma_resolve_addr(v->id, NULL, (struct sockaddr *)&ss, timeout_ms) ?
		-errno : expect_event(v->ec, RDMA_CM_EVENT_ADDR_RESOLVED,
				      timeout_ms, err, errlen);
	if (!r)
		r = rdma_resolve_route(v->id, timeout_ms) ? -errno :
			expect_event(v->ec, RDMA_CM_EVENT_ROUTE_RESOLVED,
				     timeout_ms, err, errlen);
	if (!r)
		r = setup(v, max_msg, err, errlen);
	conn_param(&cp, hello, sizeof(*hello));
	if (!r)
		r = rdma_connect(v->id, &cp) ? -errno :
			expect_event(v->ec, RDMA_CM_EVENT_ESTABLISHED, timeout_ms,
				     err, errlen);
	if (r) {
		if (!*err)
			snprintf(err, errlen, "cannot reach %s over RDMA: %s",
				 v->l.peer, strerror(-r));
		verbs_close(&v->l);
		return r;
	}
	*out = &v->l;
	return 0;
}
