// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon channel: generic netlink family "dlm" (uapi/linux/dlmem_nl.h).
 *
 * One daemon is registered at a time.  Requests carry small descriptors;
 * page contents move through the frame pool (pool.c).  The kernel never
 * trusts the daemon: a completion must come from the registered socket,
 * name a request in flight and carry 0 or a negative errno.  The daemon is
 * gone when it unregisters, when its socket is released (it died), or when
 * a request goes unanswered past request_timeout_ms; every request in
 * flight to it then fails, and programs waiting on one get SIGBUS.  Each
 * registration is a new generation: only the daemon a request was sent
 * to may answer it, and declaring a daemon gone never touches a later
 * one.  A space belongs to the daemon that accepted its SPACE_NEW:
 * requests about it are never sent to a later daemon, which could not
 * answer for its pages (dlm_req_send_io() fails them with -ENOTCONN, as
 * with no daemon).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/mutex.h>
#include <linux/netlink.h>
#include <linux/notifier.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>

#include "dlmem.h"

static DEFINE_MUTEX(dlm_daemon_lock);
static u32 dlm_daemon_portid;		/* 0: no daemon */
static struct net *dlm_daemon_net;
static u64 dlm_daemon_gen;		/* bumped at each registration */
#define DLM_GEN_ANY	U64_MAX		/* dlm_daemon_gone(): whichever */

static DEFINE_XARRAY_ALLOC(dlm_reqs);	/* requests in flight, by id */
static u32 dlm_req_next;

static struct genl_family dlm_genl;

/* Netlink port of the registered daemon, 0 when there is none. */
u32 dlm_daemon_port(void)
{
	u32 port;

	mutex_lock(&dlm_daemon_lock);
	port = dlm_daemon_portid;
	mutex_unlock(&dlm_daemon_lock);
	return port;
}

bool dlm_daemon_present(u64 *generation)
{
	bool present;

	mutex_lock(&dlm_daemon_lock);
	present = dlm_daemon_portid != 0;
	if (generation)
		*generation = dlm_daemon_gen;
	mutex_unlock(&dlm_daemon_lock);
	return present;
}

static void dlm_req_release(struct kref *ref)
{
	struct dlm_req *req = container_of(ref, struct dlm_req, ref);

	if (req->user_counted)
		dlm_user_request_put(req->sp->user);
	if (req->sp && req->op != DLM_NL_OP_SPACE_DEL)
		dlm_space_put(req->sp);
	kfree(req);
}

void dlm_req_put(struct dlm_req *req)
{
	kref_put(&req->ref, dlm_req_release);
}

/*
 * The daemon of generation @gen is gone (DLM_GEN_ANY: whichever): fail
 * its requests in flight.  A later daemon that registered meanwhile (this
 * walk takes each space's lock and may be slow, and a waiter may find an
 * old request late) is not touched, nor are its requests.  No locks held.
 */
static void dlm_daemon_gone(u64 gen, const char *why)
{
	struct dlm_req *req;
	unsigned long id;
	bool was = false;

	mutex_lock(&dlm_daemon_lock);
	if (gen == DLM_GEN_ANY || gen == dlm_daemon_gen) {
		was = dlm_daemon_portid != 0;
		dlm_daemon_portid = 0;
		dlm_daemon_net = NULL;
	}
	mutex_unlock(&dlm_daemon_lock);
	if (was)
		pr_warn("daemon gone (%s): failing requests in flight; pages not resident are unavailable until spaces are set up again\n",
			why);

	xa_for_each(&dlm_reqs, id, req) {
		if (gen != DLM_GEN_ANY && req->gen != gen)
			continue;
		if (xa_cmpxchg(&dlm_reqs, id, req, NULL, GFP_KERNEL) != req)
			continue;
		req->status = -EPIPE;
		dlm_remote_complete(req);
		dlm_req_put(req);
	}
}

/* A waiter saw @req unanswered past the timeout. */
void dlm_req_timed_out(struct dlm_req *req)
{
	char why[96];

	snprintf(why, sizeof(why), "request %u (op %u) unanswered for %u ms",
		 req->id, req->op, dlm_request_timeout_ms);
	dlm_daemon_gone(req->gen, why);
}

/*
 * A request of @what @index, sent to the daemon of generation @gen, went
 * unanswered past the timeout.
 */
void dlm_daemon_stalled(u64 gen, const char *what, int index)
{
	char why[96];

	snprintf(why, sizeof(why), "%s (%d) for %u ms", what, index,
		 dlm_request_timeout_ms);
	dlm_daemon_gone(gen, why);
}

/*
 * Declare the daemon gone if any request has been in flight for longer
 * than request_timeout_ms; @who waited (for the log).  For waits that
 * have no request of their own to time (remote.c: every slot in
 * transfer, or the owner's max_user_requests reached; blk_order.c: a
 * block request behind an overlapping one): the requests they wait
 * behind may have no waiter at all (read-ahead, or their program was
 * killed) or no timer that can fire, and a daemon that is alive but
 * silent would otherwise keep such a wait going for ever.  Costs one
 * walk of the requests in flight.
 */
void dlm_reqs_watchdog(const char *who)
{
	u64 limit = (u64)READ_ONCE(dlm_request_timeout_ms) * NSEC_PER_MSEC;
	XA_STATE(xas, &dlm_reqs, 0);
	struct dlm_req *req;
	u32 id = 0, op = 0;
	bool stale = false;
	char why[96];
	u64 now, gen = 0;

	xa_lock(&dlm_reqs);
	/* Every request in the table was sent before this. */
	now = local_clock();
	xas_for_each(&xas, req, ULONG_MAX) {
		if ((s64)(now - req->sent_ns) > (s64)limit) {
			id = req->id;
			op = req->op;
			gen = req->gen;
			stale = true;
			break;
		}
	}
	xa_unlock(&dlm_reqs);
	if (!stale)
		return;
	snprintf(why, sizeof(why),
		 "request %u (op %u) unanswered for %u ms, found by %s",
		 id, op, dlm_request_timeout_ms, who);
	dlm_daemon_gone(gen, why);
}

static int dlm_req_fill(struct sk_buff *msg, struct dlm_req *req,
			const struct dlm_space *sp)
{
	u64 off = 0;

	if (req->op == DLM_NL_OP_FETCH || req->op == DLM_NL_OP_STORE ||
	    req->op == DLM_NL_OP_DROP || req->op == DLM_NL_OP_READ ||
	    req->op == DLM_NL_OP_WRITE)
		off = (u64)(sp->pool_first + req->slot * sp->ppd) << PAGE_SHIFT;

	if (nla_put_u64_64bit(msg, DLM_NL_A_REQ_ID, req->id, DLM_NL_A_PAD) ||
	    nla_put_u32(msg, DLM_NL_A_OP, req->op) ||
	    nla_put_u32(msg, DLM_NL_A_SPACE, sp->id) ||
	    nla_put_u64_64bit(msg, DLM_NL_A_DPN, req->dpn, DLM_NL_A_PAD) ||
	    nla_put_u64_64bit(msg, DLM_NL_A_POOL_OFF, off, DLM_NL_A_PAD) ||
	    nla_put_u32(msg, DLM_NL_A_LEN, req->len ?: sp->page_size))
		return -EMSGSIZE;
	if (req->op == DLM_NL_OP_SPACE_NEW &&
	    (nla_put_u64_64bit(msg, DLM_NL_A_PAGE_SIZE, sp->page_size,
			       DLM_NL_A_PAD) ||
	     nla_put_u64_64bit(msg, DLM_NL_A_TOTAL_SIZE,
			       sp->nr_dpages * sp->page_size, DLM_NL_A_PAD) ||
	     nla_put_u64_64bit(msg, DLM_NL_A_BUDGET,
			       sp->is_blk ? 0 : sp->budget_dpages * sp->page_size,
			       DLM_NL_A_PAD)))
		return -EMSGSIZE;
	return 0;
}

/*
 * Send request @op about DLM page @dpn (in slot @slot) of @sp to the
 * daemon.  Returns the request with a reference for the caller, who waits
 * for req->done (sp->wq is woken) and then drops it.  SPACE_DEL is sent
 * while @sp is being freed: it takes no reference on it and must not be
 * waited for.
 */
/* A transfer of a DLM page, counted against its owner's limit. */
static bool dlm_req_is_transfer(u32 op)
{
	return op == DLM_NL_OP_FETCH || op == DLM_NL_OP_STORE ||
	       op == DLM_NL_OP_DROP;
}

struct dlm_req *dlm_req_send(u32 op, struct dlm_space *sp, u64 dpn, u64 slot)
{
	return dlm_req_send_io(op, sp, dpn, slot, 0, NULL);
}

/*
 * dlm_req_send(), moving @len bytes (0: the DLM page size); @priv is set
 * before the request can complete.
 */
struct dlm_req *dlm_req_send_io(u32 op, struct dlm_space *sp, u64 dpn,
				u64 slot, u32 len, void *priv)
{
	struct sk_buff *msg;
	struct dlm_req *req;
	int ret, tries;
	struct net *net;
	u32 portid;
	void *hdr;

	/* A transfer past the owner's max_user_requests waits (remote.c). */
	if (dlm_req_is_transfer(op) && !dlm_user_request_get(sp->user))
		return ERR_PTR(-EAGAIN);
	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req) {
		if (dlm_req_is_transfer(op))
			dlm_user_request_put(sp->user);
		return ERR_PTR(-ENOMEM);
	}
	req->user_counted = dlm_req_is_transfer(op);
	/*
	 * The table's reference and the caller's, both taken now: once sent,
	 * the request may be completed, and the table's reference dropped,
	 * before dlm_req_send() returns.
	 */
	kref_init(&req->ref);
	kref_get(&req->ref);
	req->op = op;
	req->dpn = dpn;
	req->slot = slot;
	req->len = len;
	req->priv = priv;
	req->sp = sp;
	req->sent_ns = local_clock();
	if (op != DLM_NL_OP_SPACE_DEL)
		kref_get(&sp->ref);

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg) {
		ret = -ENOMEM;
		goto free_req;
	}

	mutex_lock(&dlm_daemon_lock);
	portid = dlm_daemon_portid;
	net = dlm_daemon_net;
	if (op == DLM_NL_OP_SPACE_NEW)
		sp->generation = dlm_daemon_gen;
	else if (sp->generation != dlm_daemon_gen)
		portid = 0;	/* a later daemon never knew this space */
	if (!portid) {
		mutex_unlock(&dlm_daemon_lock);
		ret = -ENOTCONN;
		goto free_msg;
	}
	req->gen = dlm_daemon_gen;
	/*
	 * In the table before the daemon can be declared gone, so that
	 * dlm_daemon_gone() (which clears the port under the lock first)
	 * fails it if the daemon goes away from here on.
	 */
	ret = xa_alloc_cyclic(&dlm_reqs, &req->id, req, xa_limit_32b,
			      &dlm_req_next, GFP_KERNEL);
	mutex_unlock(&dlm_daemon_lock);
	if (ret < 0)
		goto free_msg;

	hdr = genlmsg_put(msg, 0, 0, &dlm_genl, 0, DLM_NL_CMD_REQUEST);
	ret = hdr ? dlm_req_fill(msg, req, sp) : -EMSGSIZE;
	if (!ret) {
		genlmsg_end(msg, hdr);
		/*
		 * No lock is held here: the daemon completes requests through
		 * dlm_nl_complete(), which must not wait for us.  A full
		 * socket buffer is transient: retry briefly, then give up.
		 */
		for (tries = 0; tries < 100; tries++) {
			ret = genlmsg_unicast(net, skb_get(msg), portid);
			if (ret != -EAGAIN)
				break;
			usleep_range(1000, 2000);
		}
	}
	nlmsg_free(msg);
	if (!ret)
		return req;
	/* Unsent: fail it, unless dlm_daemon_gone() already took it over. */
	if (xa_cmpxchg(&dlm_reqs, req->id, req, NULL, GFP_KERNEL) != req)
		return req;
	goto free_req;

free_msg:
	nlmsg_free(msg);
free_req:
	dlm_req_put(req);	/* the table's */
	dlm_req_put(req);	/* the caller's */
	return ERR_PTR(ret);
}

static int dlm_nl_register(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *reply;
	u64 want, granted;
	void *hdr;
	int ret;

	if (!info->attrs[DLM_NL_A_VERSION] || !info->attrs[DLM_NL_A_POOL_SIZE]) {
		GENL_SET_ERR_MSG(info, "VERSION and POOL_SIZE are required");
		return -EINVAL;
	}
	if (nla_get_u32(info->attrs[DLM_NL_A_VERSION]) != DLM_GENL_VERSION) {
		GENL_SET_ERR_MSG(info, "unsupported DLM_GENL_VERSION");
		return -EPROTONOSUPPORT;
	}
	want = nla_get_u64(info->attrs[DLM_NL_A_POOL_SIZE]);

	reply = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!reply)
		return -ENOMEM;

	mutex_lock(&dlm_daemon_lock);
	if (dlm_daemon_portid) {
		GENL_SET_ERR_MSG(info, "another daemon is registered");
		ret = -EBUSY;
		goto unlock;
	}
	ret = dlm_pool_grant(want, &granted);
	if (ret) {
		GENL_SET_ERR_MSG(info, "pool refused: POOL_SIZE not 1 page..max_local_mb");
		goto unlock;
	}
	hdr = genlmsg_put_reply(reply, info, &dlm_genl, 0, DLM_NL_CMD_REGISTER);
	if (!hdr ||
	    nla_put_u32(reply, DLM_NL_A_VERSION, DLM_GENL_VERSION) ||
	    nla_put_u64_64bit(reply, DLM_NL_A_POOL_SIZE, granted, DLM_NL_A_PAD) ||
	    nla_put_u32(reply, DLM_NL_A_CPU_PAGE_SIZE, PAGE_SIZE)) {
		ret = -EMSGSIZE;
		goto unlock;
	}
	genlmsg_end(reply, hdr);
	dlm_daemon_portid = info->snd_portid;
	dlm_daemon_net = genl_info_net(info);
	dlm_daemon_gen++;
	mutex_unlock(&dlm_daemon_lock);
	pr_info("daemon registered (port %u, pool %llu MiB)\n",
		info->snd_portid, granted >> 20);
	return genlmsg_reply(reply, info);

unlock:
	mutex_unlock(&dlm_daemon_lock);
	nlmsg_free(reply);
	return ret;
}

/* From the registered daemon?  If so, *@gen is its generation. */
static bool dlm_nl_from_daemon(struct genl_info *info, u64 *gen)
{
	bool ok;

	mutex_lock(&dlm_daemon_lock);
	ok = dlm_daemon_portid && info->snd_portid == dlm_daemon_portid &&
	     net_eq(genl_info_net(info), dlm_daemon_net);
	*gen = dlm_daemon_gen;
	mutex_unlock(&dlm_daemon_lock);
	return ok;
}

static int dlm_nl_unregister(struct sk_buff *skb, struct genl_info *info)
{
	u64 gen;

	if (!dlm_nl_from_daemon(info, &gen)) {
		GENL_SET_ERR_MSG(info, "not the registered daemon");
		return -EPERM;
	}
	dlm_daemon_gone(gen, "unregistered");
	return 0;
}

static int dlm_nl_complete(struct sk_buff *skb, struct genl_info *info)
{
	struct dlm_req *req;
	u32 flags = 0;
	u64 id, gen;
	s32 status;

	if (!dlm_nl_from_daemon(info, &gen)) {
		GENL_SET_ERR_MSG(info, "not the registered daemon");
		return -EPERM;
	}
	if (!info->attrs[DLM_NL_A_REQ_ID] || !info->attrs[DLM_NL_A_STATUS]) {
		GENL_SET_ERR_MSG(info, "REQ_ID and STATUS are required");
		return -EINVAL;
	}
	id = nla_get_u64(info->attrs[DLM_NL_A_REQ_ID]);
	status = nla_get_s32(info->attrs[DLM_NL_A_STATUS]);
	if (status > 0 || status < -MAX_ERRNO) {
		GENL_SET_ERR_MSG(info, "STATUS must be 0 or a negative errno");
		return -EINVAL;
	}
	if (info->attrs[DLM_NL_A_FLAGS])
		flags = nla_get_u32(info->attrs[DLM_NL_A_FLAGS]);
	if (flags & ~DLM_NL_F_ALL) {
		GENL_SET_ERR_MSG(info, "unknown FLAGS bits");
		return -EINVAL;
	}
	if (id > U32_MAX)
		return -ENOENT;
	/* Only the daemon a request was sent to may answer it. */
	xa_lock(&dlm_reqs);
	req = xa_load(&dlm_reqs, id);
	if (req && req->gen == gen)
		__xa_erase(&dlm_reqs, id);
	else
		req = NULL;
	xa_unlock(&dlm_reqs);
	if (!req) {
		GENL_SET_ERR_MSG(info, "no such request in flight");
		return -ENOENT;
	}
	req->status = status;
	req->kept = status == 0 && (flags & DLM_NL_F_KEPT);
	dlm_remote_complete(req);
	dlm_req_put(req);
	return 0;
}

static const struct nla_policy dlm_nl_policy[DLM_NL_A_MAX + 1] = {
	[DLM_NL_A_VERSION]	= { .type = NLA_U32 },
	[DLM_NL_A_POOL_SIZE]	= { .type = NLA_U64 },
	[DLM_NL_A_REQ_ID]	= { .type = NLA_U64 },
	[DLM_NL_A_STATUS]	= { .type = NLA_S32 },
	[DLM_NL_A_FLAGS]	= { .type = NLA_U32 },
};

static const struct genl_small_ops dlm_nl_ops[] = {
	{
		.cmd = DLM_NL_CMD_REGISTER,
		.doit = dlm_nl_register,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = DLM_NL_CMD_UNREGISTER,
		.doit = dlm_nl_unregister,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = DLM_NL_CMD_COMPLETE,
		.doit = dlm_nl_complete,
		.flags = GENL_ADMIN_PERM,
	},
};

static struct genl_family dlm_genl = {
	.name = DLM_GENL_NAME,
	.version = DLM_GENL_VERSION,
	.maxattr = DLM_NL_A_MAX,
	.policy = dlm_nl_policy,
	.netnsok = false,
	.module = THIS_MODULE,
	.small_ops = dlm_nl_ops,
	.n_small_ops = ARRAY_SIZE(dlm_nl_ops),
	.resv_start_op = DLM_NL_CMD_MAX + 1,
};

static int dlm_nl_notify(struct notifier_block *nb, unsigned long state,
			 void *data)
{
	struct netlink_notify *n = data;
	bool ours;
	u64 gen;

	if (state != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC)
		return NOTIFY_DONE;
	mutex_lock(&dlm_daemon_lock);
	ours = dlm_daemon_portid && n->portid == dlm_daemon_portid &&
	       net_eq(n->net, dlm_daemon_net);
	gen = dlm_daemon_gen;
	mutex_unlock(&dlm_daemon_lock);
	if (ours)
		dlm_daemon_gone(gen, "its socket was closed");
	return NOTIFY_DONE;
}

static struct notifier_block dlm_nl_notifier = {
	.notifier_call = dlm_nl_notify,
};

int dlm_genl_init(void)
{
	int ret;

	ret = netlink_register_notifier(&dlm_nl_notifier);
	if (ret)
		return ret;
	ret = genl_register_family(&dlm_genl);
	if (ret)
		netlink_unregister_notifier(&dlm_nl_notifier);
	return ret;
}

void dlm_genl_exit(void)
{
	genl_unregister_family(&dlm_genl);
	netlink_unregister_notifier(&dlm_nl_notifier);
	dlm_daemon_gone(DLM_GEN_ANY, "module unloading");
}
