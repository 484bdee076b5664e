// SPDX-License-Identifier: GPL-2.0
/*
 * nl.c - generic netlink with dlmem.ko (nl.h), on libnl-genl-3.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <linux/dlmem_nl.h>

#include "log.h"
#include "nl.h"

#define NL_RCVBUF		(32 << 20)	/* room for bursts of requests */
#define NL_MSGBUF		(64 << 10)
#define NL_REPLY_TIMEOUT_MS	5000

#ifndef SOL_NETLINK
#define SOL_NETLINK		270
#endif

struct pending {
	struct dlm_request r;
	struct pending *next;
};

struct dlm_nl {
	struct nl_sock *sk;
	int family;
	struct stats *st;
	pthread_mutex_t send_lock;
	struct pending *pend_head, *pend_tail;	/* REQUESTs during REGISTER */
	atomic_uint_fast64_t refused_logged;
};

/* Receive-side state of one conversation (register, run, unregister). */
struct conv {
	struct dlm_nl *nl;
	int acked, error, got_reply, stash, dropped;
	char errmsg[256];		/* the kernel's extended ack message */
	struct dlm_nl_reg *reg;
	dlm_nl_request_fn fn;
	void *ctx;
};

static const struct {
	const char *name;
	int size;
} attr_info[DLM_NL_A_MAX + 1] = {
	[DLM_NL_A_VERSION] = { "VERSION", 4 },
	[DLM_NL_A_POOL_SIZE] = { "POOL_SIZE", 8 },
	[DLM_NL_A_REQ_ID] = { "REQ_ID", 8 },
	[DLM_NL_A_OP] = { "OP", 4 },
	[DLM_NL_A_SPACE] = { "SPACE", 4 },
	[DLM_NL_A_DPN] = { "DPN", 8 },
	[DLM_NL_A_POOL_OFF] = { "POOL_OFF", 8 },
	[DLM_NL_A_LEN] = { "LEN", 4 },
	[DLM_NL_A_STATUS] = { "STATUS", 4 },
	[DLM_NL_A_PAGE_SIZE] = { "PAGE_SIZE", 8 },
	[DLM_NL_A_TOTAL_SIZE] = { "TOTAL_SIZE", 8 },
	[DLM_NL_A_CPU_PAGE_SIZE] = { "CPU_PAGE_SIZE", 4 },
	[DLM_NL_A_PAD] = { "PAD", -1 },
	[DLM_NL_A_BUDGET] = { "BUDGET", 8 },
	[DLM_NL_A_FLAGS] = { "FLAGS", 4 },
};

const char *dlm_nl_attr_name(int attr)
{
	if (attr <= 0 || attr > DLM_NL_A_MAX || !attr_info[attr].name)
		return "?";
	return attr_info[attr].name;
}

/* Attributes of a message, each checked for its exact size. */
static int parse_attrs(struct nlmsghdr *nlh, struct nlattr **tb,
		       uint32_t *have)
{
	int a, bad = 0;

	if (!genlmsg_valid_hdr(nlh, 0) ||
	    genlmsg_parse(nlh, 0, tb, DLM_NL_A_MAX, NULL) < 0)
		return -1;
	*have = 0;
	for (a = 1; a <= DLM_NL_A_MAX; a++) {
		if (!tb[a] || attr_info[a].size < 0)
			continue;
		if (nla_len(tb[a]) != attr_info[a].size) {
			if (!bad)
				bad = a;
			tb[a] = NULL;
			continue;
		}
		*have |= 1u << a;
	}
	return bad;
}

int dlm_nl_parse_request(struct nlmsghdr *nlh, struct dlm_request *r)
{
	struct nlattr *tb[DLM_NL_A_MAX + 1];
	int bad;

	memset(r, 0, sizeof(*r));
	bad = parse_attrs(nlh, tb, &r->have);
	if (bad < 0)
		return -1;
	if (tb[DLM_NL_A_REQ_ID])
		r->req_id = nla_get_u64(tb[DLM_NL_A_REQ_ID]);
	if (tb[DLM_NL_A_OP])
		r->op = nla_get_u32(tb[DLM_NL_A_OP]);
	if (tb[DLM_NL_A_SPACE])
		r->space = nla_get_u32(tb[DLM_NL_A_SPACE]);
	if (tb[DLM_NL_A_DPN])
		r->dpn = nla_get_u64(tb[DLM_NL_A_DPN]);
	if (tb[DLM_NL_A_POOL_OFF])
		r->pool_off = nla_get_u64(tb[DLM_NL_A_POOL_OFF]);
	if (tb[DLM_NL_A_LEN])
		r->len = nla_get_u32(tb[DLM_NL_A_LEN]);
	if (tb[DLM_NL_A_PAGE_SIZE])
		r->page_size = nla_get_u64(tb[DLM_NL_A_PAGE_SIZE]);
	if (tb[DLM_NL_A_TOTAL_SIZE])
		r->total_size = nla_get_u64(tb[DLM_NL_A_TOTAL_SIZE]);
	if (tb[DLM_NL_A_BUDGET])
		r->budget = nla_get_u64(tb[DLM_NL_A_BUDGET]);
	return bad;
}

/* ---- receiving ------------------------------------------------------------ */

static void deliver(struct conv *cv, const struct dlm_request *r)
{
	struct dlm_nl *nl = cv->nl;
	struct pending *p;

	if (cv->fn) {
		cv->fn(cv->ctx, r);
		return;
	}
	if (!cv->stash) {
		log_debug("request ignored while unregistering", "req_id=%" PRIu64,
			  r->req_id);
		return;
	}
	p = malloc(sizeof(*p));
	if (!p) {
		log_error("out of memory keeping an early request", "req_id=%" PRIu64,
			  r->req_id);
		return;
	}
	p->r = *r;
	p->next = NULL;
	if (nl->pend_tail)
		nl->pend_tail->next = p;
	else
		nl->pend_head = p;
	nl->pend_tail = p;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct conv *cv = arg;
	struct dlm_nl *nl = cv->nl;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct sockaddr_nl *src = nlmsg_get_src(msg);
	struct nlattr *tb[DLM_NL_A_MAX + 1];
	struct genlmsghdr *gh;
	struct dlm_request r;
	int bad;

	if (src && src->nl_pid != 0) {
		log_warn("netlink message not from the kernel ignored", "portid=%u",
			 src->nl_pid);
		return NL_SKIP;
	}
	if (nlh->nlmsg_type != nl->family || !genlmsg_valid_hdr(nlh, 0)) {
		log_debug("netlink message of another family ignored", "type=%u",
			  nlh->nlmsg_type);
		return NL_SKIP;
	}
	gh = nlmsg_data(nlh);
	if (gh->cmd == DLM_NL_CMD_REQUEST) {
		bad = dlm_nl_parse_request(nlh, &r);
		if (bad < 0) {
			atomic_fetch_add(&nl->st->bad_requests, 1);
			log_warn("malformed REQUEST ignored", "len=%u", nlh->nlmsg_len);
			return NL_SKIP;
		}
		if (bad) {
			log_warn("REQUEST attribute of the wrong size", "attr=%s req_id=%" PRIu64,
				 dlm_nl_attr_name(bad), r.req_id);
		}
		log_debug("request", "req_id=%" PRIu64 " op=%u space=%u dpn=%" PRIu64
			  " pool_off=%" PRIu64 " len=%u", r.req_id, r.op, r.space,
			  r.dpn, r.pool_off, r.len);
		deliver(cv, &r);
		return NL_OK;
	}
	if (cv->reg && !cv->got_reply) {
		/* The reply to REGISTER. */
		uint32_t have;

		if (parse_attrs(nlh, tb, &have) < 0)
			return NL_SKIP;
		if (tb[DLM_NL_A_VERSION])
			cv->reg->version = nla_get_u32(tb[DLM_NL_A_VERSION]);
		if (tb[DLM_NL_A_POOL_SIZE])
			cv->reg->pool_size = nla_get_u64(tb[DLM_NL_A_POOL_SIZE]);
		if (tb[DLM_NL_A_CPU_PAGE_SIZE])
			cv->reg->cpu_page_size = nla_get_u32(tb[DLM_NL_A_CPU_PAGE_SIZE]);
		cv->got_reply = !!tb[DLM_NL_A_POOL_SIZE];
		return NL_OK;
	}
	log_debug("unexpected netlink command ignored", "cmd=%u", gh->cmd);
	return NL_SKIP;
}

/* The message string of an extended ack (NETLINK_EXT_ACK), if any. */
static void ext_ack_msg(struct nlmsgerr *e, char *buf, size_t len)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t off = sizeof(*e);
	int rest;

	buf[0] = '\0';
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		/* The echoed request, whole: its length must make sense. */
		if (e->msg.nlmsg_len < NLMSG_HDRLEN ||
		    e->msg.nlmsg_len > nlh->nlmsg_len)
			return;
		off += NLMSG_ALIGN(e->msg.nlmsg_len) - NLMSG_HDRLEN;
	}
	rest = (int)nlh->nlmsg_len - NLMSG_HDRLEN - (int)off;
	if (rest <= 0 || nla_parse(tb, NLMSGERR_ATTR_MAX,
				   (struct nlattr *)((char *)e + off), rest, NULL))
		return;
	if (tb[NLMSGERR_ATTR_MSG])
		snprintf(buf, len, "%.*s", nla_len(tb[NLMSGERR_ATTR_MSG]),
			 (char *)nla_data(tb[NLMSGERR_ATTR_MSG]));
	/* nla_len counts the NUL; %.*s stops at it anyway. */
}

static int on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	struct conv *cv = arg;
	struct dlm_nl *nl = cv->nl;
	uint64_t n;

	(void)who;
	ext_ack_msg(e, cv->errmsg, sizeof(cv->errmsg));
	if (cv->reg || !cv->fn) {
		/* REGISTER or UNREGISTER refused: the conversation ends. */
		cv->error = e->error;
		return NL_STOP;
	}
	if (e->error == -EPERM) {
		/*
		 * Not the registered daemon any more: the kernel gave up on
		 * dlmd (a request outlived its request_timeout_ms).
		 */
		cv->dropped = 1;
		return NL_STOP;
	}
	/* A COMPLETE refused by the kernel (late, duplicate, bad). */
	atomic_fetch_add(&nl->st->nl_refused, 1);
	n = atomic_fetch_add(&nl->refused_logged, 1) + 1;
	if ((n & (n - 1)) == 0)
		log_warn("kernel refused a COMPLETE (request timed out or unknown?)",
			 "err=\"%s\" kernel=\"%s\" seq=%u count=%" PRIu64,
			 strerror(-e->error), cv->errmsg, e->msg.nlmsg_seq, n);
	return NL_SKIP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct conv *cv = arg;

	(void)msg;
	cv->acked = 1;
	return cv->fn ? NL_OK : NL_STOP;
}

static int on_seq(struct nl_msg *msg, void *arg)
{
	(void)msg;
	(void)arg;
	return NL_OK;
}

static struct nl_cb *conv_cb(struct conv *cv)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);

	if (!cb)
		return NULL;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, cv);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, cv);
	nl_cb_set(cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, on_seq, cv);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, cv);
	return cb;
}

/*
 * Receive what is queued.  Returns 0 when drained, 1 when the conversation
 * ended (ack or error), -errno on a socket failure.
 */
static int drain(struct dlm_nl *nl, struct nl_cb *cb, struct conv *cv)
{
	int r;

	for (;;) {
		r = nl_recvmsgs(nl->sk, cb);
		if (cv->acked || cv->error || cv->dropped)
			return 1;
		if (r == -NLE_AGAIN)
			return 0;
		if (r == -NLE_NOMEM) {
			/* ENOBUFS: the receive queue overflowed. */
			atomic_fetch_add(&nl->st->nl_overruns, 1);
			log_error("netlink receive buffer overrun: requests were lost and will time out in the kernel",
				  "rcvbuf=%d", NL_RCVBUF);
			continue;
		}
		if (r == -NLE_MSG_TRUNC) {
			log_warn("oversized netlink message dropped", "max=%d",
				 NL_MSGBUF);
			continue;
		}
		if (r < 0) {
			log_error("netlink receive failed", "err=\"%s\"",
				  nl_geterror(r));
			return -EIO;
		}
	}
}

/* Wait up to TIMEOUT_MS for the conversation CV to end. */
static int wait_reply(struct dlm_nl *nl, struct conv *cv, int timeout_ms)
{
	struct pollfd p = { .fd = nl_socket_get_fd(nl->sk), .events = POLLIN };
	uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000ULL, t;
	struct nl_cb *cb = conv_cb(cv);
	int r = 0;

	if (!cb)
		return -ENOMEM;
	for (;;) {
		r = drain(nl, cb, cv);
		if (r)
			break;
		t = now_ns();
		if (t >= end) {
			r = -ETIMEDOUT;
			break;
		}
		if (poll(&p, 1, (int)((end - t) / 1000000ULL) + 1) < 0 &&
		    errno != EINTR) {
			r = -errno;
			break;
		}
	}
	nl_cb_put(cb);
	return r < 0 ? r : 0;
}

/* ---- sending -------------------------------------------------------------- */

static struct nl_msg *new_msg(struct dlm_nl *nl, uint8_t cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc_size(256);

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0, flags,
			 cmd, DLM_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static int send_msg(struct dlm_nl *nl, struct nl_msg *msg)
{
	int r;

	pthread_mutex_lock(&nl->send_lock);
	r = nl_send_auto(nl->sk, msg);
	pthread_mutex_unlock(&nl->send_lock);
	nlmsg_free(msg);
	return r < 0 ? r : 0;
}

int dlm_nl_complete(struct dlm_nl *nl, uint64_t req_id, int32_t status,
		    uint32_t flags)
{
	struct nl_msg *msg = new_msg(nl, DLM_NL_CMD_COMPLETE, 0);
	int r;

	if (!msg)
		return -ENOMEM;
	if (nla_put_u64(msg, DLM_NL_A_REQ_ID, req_id) ||
	    nla_put_s32(msg, DLM_NL_A_STATUS, status) ||
	    (flags && nla_put_u32(msg, DLM_NL_A_FLAGS, flags))) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	r = send_msg(nl, msg);
	if (r) {
		atomic_fetch_add(&nl->st->nl_send_errors, 1);
		log_error("cannot send COMPLETE", "req_id=%" PRIu64 " status=%d err=\"%s\"",
			  req_id, status, nl_geterror(r));
		return -EIO;
	}
	log_debug("complete", "req_id=%" PRIu64 " status=%d", req_id, status);
	return 0;
}

/* ---- lifecycle -------------------------------------------------------------- */

int dlm_nl_open(struct dlm_nl **out, struct stats *st, char *err,
		size_t errlen)
{
	struct dlm_nl *nl = calloc(1, sizeof(*nl));
	int r, fd, one = 1, buf = NL_RCVBUF;

	if (!nl) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	nl->st = st;
	pthread_mutex_init(&nl->send_lock, NULL);
	nl->sk = nl_socket_alloc();
	if (!nl->sk) {
		snprintf(err, errlen, "cannot allocate a netlink socket");
		r = -ENOMEM;
		goto fail;
	}
	r = genl_connect(nl->sk);
	if (r < 0) {
		snprintf(err, errlen, "cannot open a generic netlink socket: %s",
			 nl_geterror(r));
		r = -EIO;
		goto fail;
	}
	r = genl_ctrl_resolve(nl->sk, DLM_GENL_NAME);
	if (r < 0) {
		if (r == -NLE_OBJ_NOTFOUND) {
			snprintf(err, errlen, "generic netlink family %s not found: load the module (modprobe dlmem)",
				 DLM_GENL_NAME);
			r = -ENOENT;
		} else {
			snprintf(err, errlen, "cannot resolve generic netlink family %s: %s",
				 DLM_GENL_NAME, nl_geterror(r));
			r = -EIO;
		}
		goto fail;
	}
	nl->family = r;
	nl_socket_disable_seq_check(nl->sk);
	nl_socket_disable_auto_ack(nl->sk);
	nl_socket_set_msg_buf_size(nl->sk, NL_MSGBUF);
	fd = nl_socket_get_fd(nl->sk);
	/* Root may exceed net.core.rmem_max; others get what they can. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)))
		nl_socket_set_buffer_size(nl->sk, NL_RCVBUF, 0);
	/* Acks without the echoed request, with the kernel's message. */
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	r = nl_socket_set_nonblocking(nl->sk);
	if (r < 0) {
		snprintf(err, errlen, "netlink socket: %s", nl_geterror(r));
		r = -EIO;
		goto fail;
	}
	*out = nl;
	return 0;
fail:
	dlm_nl_close(nl);
	return r;
}

int dlm_nl_register(struct dlm_nl *nl, uint64_t pool_want,
		    struct dlm_nl_reg *reg, char *err, size_t errlen)
{
	struct conv cv = { .nl = nl, .reg = reg, .stash = 1 };
	struct nl_msg *msg;
	int r;

	memset(reg, 0, sizeof(*reg));
	msg = new_msg(nl, DLM_NL_CMD_REGISTER, NLM_F_ACK);
	if (!msg || nla_put_u32(msg, DLM_NL_A_VERSION, DLM_GENL_VERSION) ||
	    nla_put_u64(msg, DLM_NL_A_POOL_SIZE, pool_want)) {
		if (msg)
			nlmsg_free(msg);
		snprintf(err, errlen, "cannot build DLM_NL_CMD_REGISTER");
		return -ENOMEM;
	}
	r = send_msg(nl, msg);
	if (r) {
		snprintf(err, errlen, "cannot send DLM_NL_CMD_REGISTER: %s",
			 nl_geterror(r));
		return r == -NLE_PERM ? -EPERM : -EIO;
	}
	r = wait_reply(nl, &cv, NL_REPLY_TIMEOUT_MS);
	if (!r)
		r = cv.error;
	switch (r) {
	case 0:
		break;
	case -EPERM:
	case -EACCES:
		snprintf(err, errlen, "DLM_NL_CMD_REGISTER: %s: dlmd needs CAP_SYS_ADMIN (run it as root)",
			 strerror(-r));
		return r;
	case -EBUSY:
		snprintf(err, errlen, "DLM_NL_CMD_REGISTER: another dlmd is registered with the kernel: stop it first (only one runs per machine)");
		return r;
	case -ETIMEDOUT:
		snprintf(err, errlen, "DLM_NL_CMD_REGISTER: no answer from the kernel within %d s",
			 NL_REPLY_TIMEOUT_MS / 1000);
		return r;
	case -EINVAL:
		snprintf(err, errlen, "DLM_NL_CMD_REGISTER refused a pool of %" PRIu64 " MB (%s%s%s): the memfile's first line must be 1 to the module's max_local_mb (dlmctl info shows the limit)",
			 pool_want >> 20, strerror(-r), cv.errmsg[0] ? ": " : "",
			 cv.errmsg);
		return r;
	case -EPROTONOSUPPORT:
		snprintf(err, errlen, "DLM_NL_CMD_REGISTER: the module does not speak generic netlink version %u%s%s: use a dlmd and module of matching versions",
			 DLM_GENL_VERSION, cv.errmsg[0] ? ": " : "", cv.errmsg);
		return r;
	default:
		snprintf(err, errlen, "DLM_NL_CMD_REGISTER refused: %s%s%s",
			 strerror(-r), cv.errmsg[0] ? ": " : "", cv.errmsg);
		return r;
	}
	if (!cv.got_reply) {
		snprintf(err, errlen, "DLM_NL_CMD_REGISTER acknowledged without a reply carrying POOL_SIZE: dlmd and the module disagree on the protocol (use matching versions)");
		dlm_nl_unregister(nl);
		return -EPROTO;
	}
	if (reg->version && reg->version != DLM_GENL_VERSION) {
		snprintf(err, errlen, "the module speaks generic netlink version %u, dlmd %u: use matching versions",
			 reg->version, DLM_GENL_VERSION);
		dlm_nl_unregister(nl);
		return -EPROTO;
	}
	return 0;
}

int dlm_nl_run(struct dlm_nl *nl, dlm_nl_request_fn fn, void *ctx,
	       int stop_fd)
{
	struct conv cv = { .nl = nl, .fn = fn, .ctx = ctx };
	struct pollfd p[2] = {
		{ .fd = nl_socket_get_fd(nl->sk), .events = POLLIN },
		{ .fd = stop_fd, .events = POLLIN },
	};
	struct nl_cb *cb = conv_cb(&cv);
	struct pending *q;
	int r = 0;

	if (!cb)
		return -ENOMEM;
	while ((q = nl->pend_head)) {
		nl->pend_head = q->next;
		fn(ctx, &q->r);
		free(q);
	}
	nl->pend_tail = NULL;
	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (p[1].revents)
			break;
		if (p[0].revents & (POLLERR | POLLNVAL)) {
			/* Still read: the error (ENOBUFS) is reported by recv. */
			if (p[0].revents & POLLNVAL) {
				r = -EBADF;
				break;
			}
		}
		cv.acked = cv.error = 0;
		r = drain(nl, cb, &cv);
		if (r < 0)
			break;
		if (cv.dropped) {
			log_error("the kernel no longer accepts dlmd's completions: it declared the daemon gone (a request outlived the module's request_timeout_ms?); restart dlmd",
				  "kernel=\"%s\"", cv.errmsg);
			r = -EPIPE;
			break;
		}
		r = 0;
	}
	nl_cb_put(cb);
	return r;
}

int dlm_nl_unregister(struct dlm_nl *nl)
{
	struct conv cv = { .nl = nl };
	struct nl_msg *msg = new_msg(nl, DLM_NL_CMD_UNREGISTER, NLM_F_ACK);
	int r;

	if (!msg)
		return -ENOMEM;
	r = send_msg(nl, msg);
	if (r)
		return -EIO;
	r = wait_reply(nl, &cv, NL_REPLY_TIMEOUT_MS);
	return r ? r : cv.error;
}

void dlm_nl_close(struct dlm_nl *nl)
{
	struct pending *q;

	if (!nl)
		return;
	while ((q = nl->pend_head)) {
		nl->pend_head = q->next;
		free(q);
	}
	if (nl->sk)
		nl_socket_free(nl->sk);
	pthread_mutex_destroy(&nl->send_lock);
	free(nl);
}
