// SPDX-License-Identifier: GPL-2.0
/*
 * awgstar_mock_test - libawgstar's own logic (through libawgstar.a)
 * against a board mocked in this program: ioctl(2) is defined here, so
 * the library's calls on the "device" (a regular file, for its mmap)
 * land in mock_ioctl() instead of a kernel.  The ring's other nodes are
 * played by the test, which queues their events and makes the kernel's
 * calls fail when it wants.  What it checks:
 *
 *   - awg_barrier sends one AWG_BARRIER_EVENT to AWG_NODE_ALL carrying
 *     its number (1, 2, ...), waits for that number from every other live
 *     node, keeps a node's event of the next number for the next barrier
 *     and drops other numbers;
 *   - a barrier whose flush or send failed did not happen: the next call
 *     sends the same number;
 *   - a barrier whose wait timed out stays open: the next call waits for
 *     the missing nodes without sending again;
 *   - a node that leaves the ring is not waited for;
 *   - awg_wait_event refuses AWG_BARRIER_EVENT (it would steal a barrier's
 *     event) and resumes after EINTR; awg_send_event refuses it too.
 *
 * The same barriers on a real ring of three boards run in the VM
 * (selftests/man/examples_test.sh, the SPLASH-2 kernels over libawgstar).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include <awgstar.h>

#define MOCK_SIZE	(1 << 20)
#define MOCK_QLEN	64

/* The board as the test sets it up, and what the library did to it. */
static struct {
	dev_t dev;
	ino_t ino;
	uint32_t live;		/* live mask; this node is node 0 */
	int flush_fail;		/* errno of the next AWG_IOC_FLUSH */
	int send_fail;		/* errno of the next AWG_IOC_EVENT_SEND */
	int wait_eintr;		/* EINTR for this many EVENT_WAITs */
	uint32_t leave;		/* nodes leaving at the next empty wait */
	unsigned int flushes, sends, waits;
	struct awg_event sent;	/* the last event sent */
	struct {
		uint32_t node[MOCK_QLEN], data[MOCK_QLEN];
		unsigned int head, count;
	} q[AWG_EVENTS];
} mock;

static void mock_queue(uint32_t id, uint32_t node, uint32_t data)
{
	unsigned int i = (mock.q[id].head + mock.q[id].count++) % MOCK_QLEN;

	mock.q[id].node[i] = node;
	mock.q[id].data[i] = data;
}

static int mock_fail(int *err)
{
	errno = *err;
	*err = 0;
	return -1;
}

static int mock_wait(struct awg_event *ev)
{
	typeof(mock.q[0]) *q = &mock.q[ev->id];
	struct timespec ts;

	mock.waits++;
	if (mock.wait_eintr) {
		mock.wait_eintr--;
		errno = EINTR;
		return -1;
	}
	if (q->count) {
		ev->node = q->node[q->head];
		ev->data = q->data[q->head];
		q->head = (q->head + 1) % MOCK_QLEN;
		q->count--;
		return 0;
	}
	mock.live &= ~mock.leave;
	mock.leave = 0;
	if (!ev->timeout_ms) {
		errno = EAGAIN;
		return -1;
	}
	/* As the kernel: the wait takes its time. */
	ts.tv_sec = ev->timeout_ms / 1000;
	ts.tv_nsec = (long)(ev->timeout_ms % 1000) * 1000000;
	nanosleep(&ts, NULL);
	errno = ETIMEDOUT;
	return -1;
}

static int mock_ioctl(unsigned long req, void *arg)
{
	struct awg_api *api = arg;
	struct awg_info *info = arg;
	struct awg_event *ev = arg;

	switch (req) {
	case AWG_IOC_API:
		api->api = AWG_API_VERSION;
		api->features = 0;
		return 0;
	case AWG_IOC_GET_INFO:
		memset(info, 0, sizeof(*info));
		info->api = AWG_API_VERSION;
		info->size = MOCK_SIZE;
		info->nodes = 3;
		info->live_mask = mock.live;
		info->ring = AWG_RING_DAEMON;
		return 0;
	case AWG_IOC_FLUSH:
		mock.flushes++;
		return mock.flush_fail ? mock_fail(&mock.flush_fail) : 0;
	case AWG_IOC_EVENT_SEND:
		if (mock.send_fail)
			return mock_fail(&mock.send_fail);
		mock.sends++;
		mock.sent = *ev;
		return 0;
	case AWG_IOC_EVENT_WAIT:
		return mock_wait(ev);
	default:
		errno = ENOTTY;
		return -1;
	}
}

/* Every ioctl(2) of this program, libawgstar.a's included. */
int ioctl(int fd, unsigned long req, ...)
{
	struct stat st;
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fstat(fd, &st) == 0 && st.st_dev == mock.dev && st.st_ino == mock.ino)
		return mock_ioctl(req, arg);
	return syscall(SYS_ioctl, fd, req, arg);
}

FIXTURE(board) {
	char path[64];
	struct awg_handle *h;
};

FIXTURE_SETUP(board)
{
	struct stat st;
	int fd;

	memset(&mock, 0, sizeof(mock));
	strcpy(self->path, "/tmp/awgstar-mock-XXXXXX");
	fd = mkstemp(self->path);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, MOCK_SIZE));
	ASSERT_EQ(0, fstat(fd, &st));
	close(fd);
	mock.dev = st.st_dev;
	mock.ino = st.st_ino;
	mock.live = 0x7;	/* nodes 0 (this one), 1 and 2 */
	setenv("AWG_BARRIER_TIMEOUT_MS", "200", 1);
	ASSERT_EQ(0, awg_open(self->path, &self->h));
}

FIXTURE_TEARDOWN(board)
{
	awg_close(&self->h);
	unlink(self->path);
	unsetenv("AWG_BARRIER_TIMEOUT_MS");
}

/* The last barrier event sent carried @seq, to everyone, as event 15. */
#define ASSERT_SENT(seq) do {						\
	ASSERT_EQ(AWG_NODE_ALL, mock.sent.node);			\
	ASSERT_EQ(AWG_BARRIER_EVENT, mock.sent.id);			\
	ASSERT_EQ((uint32_t)(seq), mock.sent.data);			\
	ASSERT_EQ(0, mock.sent.timeout_ms);				\
	ASSERT_EQ(0, mock.sent.reserved);				\
} while (0)

TEST_F(board, barrier_numbers_and_early_events)
{
	/* Barrier 1: a stale event (another program's) is dropped. */
	mock_queue(AWG_BARRIER_EVENT, 1, 77);
	mock_queue(AWG_BARRIER_EVENT, 1, 1);
	mock_queue(AWG_BARRIER_EVENT, 2, 1);
	ASSERT_EQ(0, awg_barrier(self->h));
	ASSERT_EQ(1, mock.sends);
	ASSERT_SENT(1);
	ASSERT_EQ(1, mock.flushes);
	ASSERT_EQ(0, mock.q[AWG_BARRIER_EVENT].count);

	/* Barrier 2: node 1 is already in barrier 3 when node 2 arrives. */
	mock_queue(AWG_BARRIER_EVENT, 1, 2);
	mock_queue(AWG_BARRIER_EVENT, 1, 3);
	mock_queue(AWG_BARRIER_EVENT, 2, 2);
	ASSERT_EQ(0, awg_barrier(self->h));
	ASSERT_SENT(2);

	/* Barrier 3: node 1's event was kept; only node 2's is waited for. */
	mock_queue(AWG_BARRIER_EVENT, 2, 3);
	ASSERT_EQ(0, awg_barrier(self->h));
	ASSERT_EQ(3, mock.sends);
	ASSERT_SENT(3);
	ASSERT_EQ(0, mock.q[AWG_BARRIER_EVENT].count);

	/* Barrier 4: node 1's event of barrier 3 again does not count. */
	mock_queue(AWG_BARRIER_EVENT, 1, 3);
	mock_queue(AWG_BARRIER_EVENT, 2, 4);
	errno = 0;
	ASSERT_EQ(-1, awg_barrier(self->h));
	ASSERT_EQ(ETIMEDOUT, errno);
	ASSERT_SENT(4);
}

TEST_F(board, barrier_whose_send_failed_is_entered_again)
{
	/* The send fails (a stalled ring): nothing counted. */
	mock.send_fail = ETIMEDOUT;
	errno = 0;
	ASSERT_EQ(-1, awg_barrier(self->h));
	ASSERT_EQ(ETIMEDOUT, errno);
	ASSERT_EQ(0, mock.sends);
	ASSERT_EQ(0, mock.waits);

	/* The flush fails: nothing sent either. */
	mock.flush_fail = ETIMEDOUT;
	ASSERT_EQ(-1, awg_barrier(self->h));
	ASSERT_EQ(ETIMEDOUT, errno);
	ASSERT_EQ(0, mock.sends);

	mock.send_fail = ENOMEM;
	ASSERT_EQ(-1, awg_barrier(self->h));
	ASSERT_EQ(ENOMEM, errno);
	ASSERT_EQ(0, mock.sends);

	/* The retry is barrier 1, the one the other nodes are in. */
	mock_queue(AWG_BARRIER_EVENT, 1, 1);
	mock_queue(AWG_BARRIER_EVENT, 2, 1);
	ASSERT_EQ(0, awg_barrier(self->h));
	ASSERT_EQ(1, mock.sends);
	ASSERT_SENT(1);

	mock_queue(AWG_BARRIER_EVENT, 1, 2);
	mock_queue(AWG_BARRIER_EVENT, 2, 2);
	ASSERT_EQ(0, awg_barrier(self->h));
	ASSERT_SENT(2);
}

TEST_F(board, barrier_whose_wait_timed_out_is_resumed)
{
	struct timespec t0, t1;
	long ms;

	/* Node 2 is late: ETIMEDOUT after $AWG_BARRIER_TIMEOUT_MS (200). */
	mock_queue(AWG_BARRIER_EVENT, 1, 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	errno = 0;
	ASSERT_EQ(-1, awg_barrier(self->h));
	ASSERT_EQ(ETIMEDOUT, errno);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	ASSERT_LE(200, ms);
	ASSERT_GT(5000, ms);
	ASSERT_EQ(1, mock.sends);

	/* It comes: the retry flushes, does not send again, and passes. */
	mock_queue(AWG_BARRIER_EVENT, 2, 1);
	ASSERT_EQ(0, awg_barrier(self->h));
	ASSERT_EQ(1, mock.sends);
	ASSERT_EQ(2, mock.flushes);
	ASSERT_EQ(0, mock.q[AWG_BARRIER_EVENT].count);

	/* And the next one is barrier 2, waiting for both again. */
	mock_queue(AWG_BARRIER_EVENT, 1, 2);
	mock_queue(AWG_BARRIER_EVENT, 2, 2);
	ASSERT_EQ(0, awg_barrier(self->h));
	ASSERT_EQ(2, mock.sends);
	ASSERT_SENT(2);
}

TEST_F(board, barrier_does_not_wait_for_a_node_that_left)
{
	/* Node 2 leaves the ring while this node waits for it. */
	mock_queue(AWG_BARRIER_EVENT, 1, 1);
	mock.leave = 1U << 2;
	ASSERT_EQ(0, awg_barrier(self->h));
	ASSERT_SENT(1);

	/* A timed-out barrier resumed after node 1 left passes at once. */
	ASSERT_EQ(-1, awg_barrier(self->h));
	ASSERT_EQ(ETIMEDOUT, errno);
	mock.live = 0x1;
	ASSERT_EQ(0, awg_barrier(self->h));
	ASSERT_EQ(2, mock.sends);

	/* Alone on the ring: flush only, no event. */
	ASSERT_EQ(0, awg_barrier(self->h));
	ASSERT_EQ(2, mock.sends);
}

TEST_F(board, wait_event_leaves_barrier_events_alone)
{
	uint32_t node = 99, data = 99;
	unsigned int waits;

	mock_queue(AWG_BARRIER_EVENT, 1, 1);
	waits = mock.waits;
	errno = 0;
	ASSERT_EQ(-1, awg_wait_event(self->h, AWG_BARRIER_EVENT, &node, &data, 0));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, awg_wait_event(self->h, AWG_EVENTS, &node, &data, 0));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(waits, mock.waits);
	ASSERT_EQ(1, mock.q[AWG_BARRIER_EVENT].count);
	ASSERT_EQ(-1, awg_send_event(self->h, AWG_NODE_ALL, AWG_BARRIER_EVENT, 1));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, mock.sends);

	/* The last id a program may use; a signal does not end the wait. */
	mock_queue(AWG_BARRIER_EVENT - 1, 2, 0xdeadbeef);
	mock.wait_eintr = 2;
	ASSERT_EQ(0, awg_wait_event(self->h, AWG_BARRIER_EVENT - 1, &node, &data, 1000));
	ASSERT_EQ(2, node);
	ASSERT_EQ(0xdeadbeef, data);
	ASSERT_EQ(waits + 3, mock.waits);

	/* The barrier still finds its event (and node 2's). */
	mock_queue(AWG_BARRIER_EVENT, 2, 1);
	ASSERT_EQ(0, awg_barrier(self->h));
}

TEST_HARNESS_MAIN
