// SPDX-License-Identifier: GPL-2.0
/*
 * Per-user limits on DLM spaces: how many spaces one user may have at once,
 * how much DLM memory they may span together, how much of it may be local,
 * and how many transfers their spaces may have in flight to the daemon.
 * The local part bounds the frames a user holds and, with them, the
 * transfers (a remote space has at most one per local DLM page);
 * max_user_requests bounds them directly, however small the DLM pages: a
 * fault that would pass it waits for a transfer to complete instead.
 *
 * A space is charged to the effective uid of the process that sets it up
 * (DLM_IOC_SETUP) and uncharged when it is released; block devices are
 * the administrator's and are not charged.  The limits are module
 * parameters that root may change at any time (0: no limit); a change
 * applies to later setups only.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "dlmem.h"

static unsigned long max_user_mb;
module_param(max_user_mb, ulong, 0644);
MODULE_PARM_DESC(max_user_mb,
		 "Most DLM memory (sum of the spaces' total_size) one user may have at once, MiB (default 0: no limit)");

static unsigned long max_user_local_mb;
module_param(max_user_local_mb, ulong, 0644);
MODULE_PARM_DESC(max_user_local_mb,
		 "Most local budget (sum over the user's spaces; bounds its frames and its requests in flight) one user may have at once, MiB (default 0: no limit)");

static unsigned int max_user_requests;
module_param(max_user_requests, uint, 0644);
MODULE_PARM_DESC(max_user_requests,
		 "Most transfers (fetches, stores, drops) one user's DLM spaces may have in flight to the daemon at once; a fault past it waits for one to complete (default 0: no limit beyond max_user_local_mb)");

static unsigned int max_user_spaces;
module_param(max_user_spaces, uint, 0644);
MODULE_PARM_DESC(max_user_spaces,
		 "Most DLM spaces one user may have at once (default 0: no limit)");

struct dlm_user {
	struct hlist_node node;
	kuid_t uid;
	u64 total;
	u64 local;
	unsigned int spaces;
	atomic_t requests;	/* transfers in flight, all its spaces */
};

static DEFINE_SPINLOCK(dlm_users_lock);
static DEFINE_HASHTABLE(dlm_users, 6);

static struct dlm_user *dlm_user_find(kuid_t uid)
{
	struct dlm_user *u;

	hash_for_each_possible(dlm_users, u, node, __kuid_val(uid))
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/* Would @u with one more space of @total and @local bytes pass? */
static int dlm_user_check(const struct dlm_user *u, u64 total, u64 local)
{
	unsigned long mb = READ_ONCE(max_user_mb);
	unsigned long local_mb = READ_ONCE(max_user_local_mb);
	unsigned int spaces = READ_ONCE(max_user_spaces);

	if (spaces && u->spaces + 1 > spaces) {
		pr_debug("DLM_IOC_SETUP: uid %u has %u spaces, the limit (max_user_spaces)\n",
			 from_kuid(&init_user_ns, u->uid), u->spaces);
		return -EDQUOT;
	}
	if (mb && u->total + total > (u64)mb << 20) {
		pr_debug("DLM_IOC_SETUP: uid %u would have %llu MiB of DLM space, above max_user_mb=%lu\n",
			 from_kuid(&init_user_ns, u->uid),
			 (u->total + total) >> 20, mb);
		return -EDQUOT;
	}
	if (local_mb && u->local + local > (u64)local_mb << 20) {
		pr_debug("DLM_IOC_SETUP: uid %u would have %llu MiB of local budget, above max_user_local_mb=%lu\n",
			 from_kuid(&init_user_ns, u->uid),
			 (u->local + local) >> 20, local_mb);
		return -EDQUOT;
	}
	return 0;
}

/*
 * Charge a new space of @total bytes, @local of them local, to @uid; on
 * success *@user is the user's record, valid until the space is uncharged.
 */
int dlm_user_charge(kuid_t uid, u64 total, u64 local, struct dlm_user **user)
{
	struct dlm_user *u, *fresh;
	int ret;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
	if (!fresh)
		return -ENOMEM;
	spin_lock(&dlm_users_lock);
	u = dlm_user_find(uid);
	if (!u) {
		u = fresh;
		fresh = NULL;
		u->uid = uid;
		hash_add(dlm_users, &u->node, __kuid_val(uid));
	}
	ret = dlm_user_check(u, total, local);
	if (!ret) {
		u->total += total;
		u->local += local;
		u->spaces++;
		*user = u;
	} else if (!u->spaces) {
		hash_del(&u->node);
		fresh = u;	/* freed below */
	}
	spin_unlock(&dlm_users_lock);
	kfree(fresh);
	return ret;
}

void dlm_user_uncharge(kuid_t uid, u64 total, u64 local)
{
	struct dlm_user *u, *gone = NULL;

	spin_lock(&dlm_users_lock);
	u = dlm_user_find(uid);
	if (!WARN_ON_ONCE(!u || u->spaces == 0 || u->total < total ||
			  u->local < local)) {
		u->total -= total;
		u->local -= local;
		if (!--u->spaces) {
			hash_del(&u->node);
			gone = u;
		}
	}
	spin_unlock(&dlm_users_lock);
	kfree(gone);
}

/*
 * Count a transfer of one of @u's spaces in flight; false if that would
 * pass max_user_requests (not counted then).  @u NULL: not charged, no
 * limit (block devices).
 */
bool dlm_user_request_get(struct dlm_user *u)
{
	unsigned int max = READ_ONCE(max_user_requests);

	if (!u)
		return true;
	if (atomic_inc_return(&u->requests) <= max || !max)
		return true;
	atomic_dec(&u->requests);
	return false;
}

void dlm_user_request_put(struct dlm_user *u)
{
	if (u)
		atomic_dec(&u->requests);
}
