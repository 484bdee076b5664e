// SPDX-License-Identifier: GPL-2.0
/*
 * test-nlparse - decoding of DLM_NL_CMD_REQUEST messages as the kernel
 * builds them (u64 attributes behind PAD attributes), and rejection of
 * attributes of the wrong size.  Runs without the module.  TAP.
 */
#include <string.h>

#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <linux/dlmem_nl.h>

#include "nl.h"
#include "tap.h"

#define FAMILY 0x1234

static struct nl_msg *request(void)
{
	struct nl_msg *m = nlmsg_alloc();

	genlmsg_put(m, 0, 0, FAMILY, 0, 0, DLM_NL_CMD_REQUEST,
		    DLM_GENL_VERSION);
	return m;
}

/* A u64 the way nla_put_u64_64bit does it: a PAD first if unaligned. */
static void put_u64_padded(struct nl_msg *m, int attr, uint64_t v)
{
	struct nlmsghdr *n = nlmsg_hdr(m);

	if ((n->nlmsg_len + 4) % 8)
		nla_put(m, DLM_NL_A_PAD, 0, NULL);
	nla_put_u64(m, attr, v);
}

int main(void)
{
	struct dlm_request r;
	struct nl_msg *m;
	int bad;

	tap_plan(7);

	m = request();
	put_u64_padded(m, DLM_NL_A_REQ_ID, 0x1122334455667788ULL);
	nla_put_u32(m, DLM_NL_A_OP, DLM_NL_OP_FETCH);
	nla_put_u32(m, DLM_NL_A_SPACE, 42);
	put_u64_padded(m, DLM_NL_A_DPN, 1ULL << 40);
	put_u64_padded(m, DLM_NL_A_POOL_OFF, 3ULL << 20);
	nla_put_u32(m, DLM_NL_A_LEN, 1 << 20);
	bad = dlm_nl_parse_request(nlmsg_hdr(m), &r);
	tap_ok(bad == 0 && r.req_id == 0x1122334455667788ULL &&
	       r.op == DLM_NL_OP_FETCH && r.space == 42 && r.dpn == 1ULL << 40 &&
	       r.pool_off == 3ULL << 20 && r.len == 1 << 20,
	       "FETCH decoded, PAD attributes skipped");
	tap_ok(REQ_HAS(&r, DLM_NL_A_REQ_ID) && REQ_HAS(&r, DLM_NL_A_LEN) &&
	       !REQ_HAS(&r, DLM_NL_A_PAGE_SIZE) && !REQ_HAS(&r, DLM_NL_A_BUDGET),
	       "presence bits set for exactly the attributes sent");
	nlmsg_free(m);

	m = request();
	nla_put_u64(m, DLM_NL_A_REQ_ID, 7);
	nla_put_u32(m, DLM_NL_A_OP, DLM_NL_OP_SPACE_NEW);
	nla_put_u32(m, DLM_NL_A_SPACE, 3);
	nla_put_u64(m, DLM_NL_A_PAGE_SIZE, 1 << 20);
	nla_put_u64(m, DLM_NL_A_TOTAL_SIZE, 1ULL << 34);
	nla_put_u64(m, DLM_NL_A_BUDGET, 1ULL << 30);
	bad = dlm_nl_parse_request(nlmsg_hdr(m), &r);
	tap_ok(bad == 0 && r.op == DLM_NL_OP_SPACE_NEW && r.page_size == 1 << 20 &&
	       r.total_size == 1ULL << 34 && r.budget == 1ULL << 30 &&
	       REQ_HAS(&r, DLM_NL_A_BUDGET),
	       "SPACE_NEW decoded with PAGE_SIZE, TOTAL_SIZE and BUDGET");
	nlmsg_free(m);

	m = request();
	nla_put_u64(m, DLM_NL_A_REQ_ID, 9);
	nla_put_u64(m, DLM_NL_A_LEN, 4096);	/* LEN is a u32 */
	nla_put_u16(m, DLM_NL_A_SPACE, 1);	/* SPACE is a u32 */
	bad = dlm_nl_parse_request(nlmsg_hdr(m), &r);
	tap_ok(bad == DLM_NL_A_SPACE && r.req_id == 9 &&
	       !REQ_HAS(&r, DLM_NL_A_LEN) && !REQ_HAS(&r, DLM_NL_A_SPACE),
	       "attributes of the wrong size reported and left out (first: %s)",
	       dlm_nl_attr_name(bad));
	nlmsg_free(m);

	m = request();
	nla_put_u32(m, DLM_NL_A_REQ_ID, 9);	/* REQ_ID is a u64 */
	bad = dlm_nl_parse_request(nlmsg_hdr(m), &r);
	tap_ok(bad == DLM_NL_A_REQ_ID && !REQ_HAS(&r, DLM_NL_A_REQ_ID),
	       "a short REQ_ID is not trusted");
	nlmsg_free(m);

	m = request();
	nla_put_u64(m, DLM_NL_A_REQ_ID, 5);
	nla_put_u32(m, DLM_NL_A_MAX + 5, 1);	/* from a newer kernel */
	bad = dlm_nl_parse_request(nlmsg_hdr(m), &r);
	tap_ok(bad == 0 && r.req_id == 5, "unknown attributes are ignored");
	nlmsg_free(m);

	m = nlmsg_alloc();
	nlmsg_put(m, 0, 0, FAMILY, 0, 0);	/* no genl header at all */
	bad = dlm_nl_parse_request(nlmsg_hdr(m), &r);
	tap_ok(bad == -1, "a message without a generic netlink header: -1");
	nlmsg_free(m);
	return tap_done();
}
