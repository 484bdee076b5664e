// SPDX-License-Identifier: GPL-2.0
/*
 * dlm_rw - write a pattern over a DLM space, read it back, report.
 * Helper of remote_test.sh; usable by hand:
 *
 *   dlm_rw [-t TOTAL_MB] [-b BUDGET_KB] [-p PAGE_KB] [-P arr|clock]
 *          [-x serial|cross|async|inline]
 *          [-a seq|random] [-j THREADS] [-r ROUNDS] [-c CHECKS] [-z]
 *          [-f|-F] [-H] [-l] [-s FILE]
 *
 * Each round writes every word, then reads them back CHECKS times
 * (default 1).  -z only reads the never-written space and checks zeros.
 * -f writes same-filled DLM pages among others (see fill_word()) and
 * checks every word, not every 61st.  -F is -f with every DLM page
 * same-filled, each with a value of its own that changes every round.
 * -H (sequential only) reads one word of the thread's first DLM page, a
 * hot page, after every other page it visits, and checks it.
 * -l uses DLM_BACKING_LOCAL (default remote).  Exit 0 when every word
 * read back is right, 1 on a mismatch, 2 on a setup error (errno named).
 * Prints the kernel's counters as key=value.
 *
 * -s FILE (survey): write the whole space once, create FILE.written, wait
 * for FILE.go to appear (the caller breaks something meanwhile), then read
 * every DLM page, surviving SIGBUS page by page, and print
 * "intact=N lost=N wrong=N".  Exit 0 unless a page read back wrong.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../dlm/dlm_util.h"

struct job {
	uint64_t *w;
	uint64_t nwords, dpage_words, nr_dpages;
	unsigned int id, nr, random, rounds, checks, zero, fill, hot;
	uint64_t bad;
};

/*
 * -f: DLM page @dp's word @off in round @r, by @dp mod 8: zeros, a double,
 * two floats, a byte pattern (each one value repeated: kept as a value on
 * eviction), one value but for the last word, or but for the first byte
 * (stored: a scan that stopped early would lose that word), random words,
 * and a value of the page's own (the first DLM_FILL_VALS fit the space's
 * table, the rest are stored).  Rounds change some values, so rewritten
 * pages are scanned again.
 */
static uint64_t fill_word(uint64_t dp, uint64_t off, uint64_t words,
			  uint64_t r)
{
	switch (dp % 8) {
	case 0: return 0;
	case 1: return 0x3FF0000000000000ULL + r;
	case 2: return 0x3F8000003F800000ULL;
	case 3: return 0xABABABABABABABABULL ^ (r * 0x0101010101010101ULL);
	case 4: return off == words - 1 ? 0x5555555555555554ULL :
					  0x5555555555555555ULL;
	case 5: return off ? 0x1111111111111100ULL : 0x1111111111111101ULL;
	case 6: return dlm_pattern(dp * words + off, r);
	default: return 0x7000000000000000ULL + dp * 1000003 + r;
	}
}

static uint64_t word(const struct job *j, uint64_t dp, uint64_t off,
		     uint64_t r)
{
	if (j->fill == 2)	/* -F */
		return 0x7100000000000000ULL + dp * 1000003 + r * 7919;
	return j->fill ? fill_word(dp, off, j->dpage_words, r) :
			 dlm_pattern(dp * j->dpage_words + off, r);
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* -H: after a visit to DLM page @dp, read the hot page's first word. */
static void touch_hot(struct job *j, uint64_t dp, unsigned int r)
{
	if (j->hot && dp != j->id)
		j->bad += j->w[j->id * j->dpage_words] != word(j, j->id, 0, r);
}

/* Thread @id owns DLM pages id, id+nr, ...: visit them, write, then check. */
static void *run(void *arg)
{
	struct job *j = arg;
	uint64_t seed = 0x9E3779B97F4A7C15ULL * (j->id + 1), i, n, dp, off;
	unsigned int r, c;

	n = (j->nr_dpages - j->id + j->nr - 1) / j->nr;
	if (j->zero) {
		for (i = 0; i < n; i++) {
			dp = j->id + i * j->nr;
			for (off = 0; off < j->dpage_words; off += 61)
				j->bad += j->w[dp * j->dpage_words + off] != 0;
		}
		return NULL;
	}
	for (r = 0; r < j->rounds; r++) {
		for (i = 0; i < n; i++) {
			dp = j->random ? j->id + (xorshift(&seed) % n) * j->nr :
					 j->id + i * j->nr;
			for (off = 0; off < j->dpage_words; off++) {
				uint64_t k = dp * j->dpage_words + off;

				j->w[k] = word(j, dp, off, r);
			}
			touch_hot(j, dp, r);
		}
		/* Random visits may miss pages: write all once, then check. */
		for (i = 0; i < n; i++) {
			dp = j->id + i * j->nr;
			for (off = 0; off < j->dpage_words; off++) {
				uint64_t k = dp * j->dpage_words + off;

				if (j->random)
					j->w[k] = word(j, dp, off, r);
			}
		}
		for (c = 0; c < j->checks; c++) {
			for (i = 0; i < n; i++) {
				dp = j->random ?
				     j->id + (xorshift(&seed) % n) * j->nr :
				     j->id + i * j->nr;
				for (off = 0; off < j->dpage_words;
				     off += j->fill ? 1 : 61) {
					uint64_t k = dp * j->dpage_words + off;

					j->bad += j->w[k] != word(j, dp, off, r);
				}
				touch_hot(j, dp, r);
			}
		}
	}
	return NULL;
}

static sigjmp_buf survey_jmp;

static void survey_sigbus(int sig)
{
	siglongjmp(survey_jmp, 1);
}

static int survey(int fd, uint64_t *w, uint64_t total, uint64_t page,
		  const char *file)
{
	uint64_t nr = total / page, words = page / 8, d, k;
	volatile uint64_t intact = 0, lost = 0, wrong = 0;
	struct sigaction sa = { .sa_handler = survey_sigbus };
	char path[4096];
	int f;

	for (k = 0; k < total / 8; k++)
		w[k] = dlm_pattern(k, 7);
	snprintf(path, sizeof(path), "%s.written", file);
	f = open(path, O_CREAT | O_WRONLY, 0644);
	if (f >= 0)
		close(f);
	snprintf(path, sizeof(path), "%s.go", file);
	while (access(path, F_OK))
		usleep(10000);

	sigaction(SIGBUS, &sa, NULL);
	for (d = 0; d < nr; d++) {
		volatile uint64_t bad = 0;

		if (sigsetjmp(survey_jmp, 1)) {
			lost++;
			continue;
		}
		for (k = d * words; k < (d + 1) * words; k++)
			bad += w[k] != dlm_pattern(k, 7);
		if (bad)
			wrong++;
		else
			intact++;
	}
	printf("intact=%llu lost=%llu wrong=%llu stats_lost=%llu\n",
	       (unsigned long long)intact, (unsigned long long)lost,
	       (unsigned long long)wrong,
	       (unsigned long long)dlm_get_stats(fd).lost);
	return wrong ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *survey_file = NULL;
	uint64_t total = 32 * MB, budget = 4 * MB, page = 1 * MB;
	unsigned int threads = 1, random = 0, rounds = 2, i, policy = 0;
	unsigned int protocol = 0, checks = 1, zero = 0, fill = 0, hot = 0;
	struct dlm_api api = { .api = DLM_API_VERSION };
	struct dlm_setup s = { .backing = DLM_BACKING_REMOTE };
	struct job jobs[64];
	pthread_t th[64];
	struct dlm_stats st;
	uint64_t bad = 0;
	struct timespec t0, t1;
	int fd, c;
	void *p;

	while ((c = getopt(argc, argv, "t:b:p:P:x:a:j:r:c:zfFHls:h")) != -1) {
		switch (c) {
		case 't': total = strtoull(optarg, NULL, 0) * MB; break;
		case 'b': budget = strtoull(optarg, NULL, 0) * KB; break;
		case 'p': page = strtoull(optarg, NULL, 0) * KB; break;
		case 'P': policy = optarg[0] == 'a' ? DLM_POLICY_ARR :
						      DLM_POLICY_CLOCK; break;
		case 'a': random = optarg[0] == 'r'; break;
		case 'j': threads = atoi(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		case 'c': checks = atoi(optarg); break;
		case 'z': zero = 1; break;
		case 'f': fill = 1; break;
		case 'F': fill = 2; break;
		case 'H': hot = 1; break;
		case 'l': s.backing = DLM_BACKING_LOCAL; break;
		case 's': survey_file = optarg; break;
		case 'x':
			if (dlm_proto_opt(optarg, &protocol))
				return 2;
			break;
		default:
			fprintf(stderr, "usage: see the comment at the top of dlm_rw.c\n");
			return 2;
		}
	}
	if (!threads || threads > 64) {
		fprintf(stderr, "dlm_rw: -j 1..64\n");
		return 2;
	}
	s.page_size = page;
	s.total_size = total;
	s.local_budget = budget;
	s.policy = s.backing == DLM_BACKING_REMOTE ? policy : 0;
	s.protocol = s.backing == DLM_BACKING_REMOTE ? protocol : 0;

	fd = open(DLM_DEV, O_RDWR);
	if (fd < 0 || ioctl(fd, DLM_IOC_API, &api) ||
	    ioctl(fd, DLM_IOC_SETUP, &s)) {
		fprintf(stderr, "dlm_rw: setup: %s\n", strerror(errno));
		return 2;
	}
	p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 s.mmap_offset);
	if (p == MAP_FAILED) {
		fprintf(stderr, "dlm_rw: mmap: %s\n", strerror(errno));
		return 2;
	}
	if (survey_file)
		return survey(fd, p, total, page, survey_file);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < threads; i++) {
		jobs[i] = (struct job){ .w = p, .nwords = total / 8,
					.dpage_words = page / 8,
					.nr_dpages = total / page, .id = i,
					.nr = threads, .random = random,
					.rounds = rounds, .checks = checks,
					.zero = zero, .fill = fill,
					.hot = hot && !random };
		pthread_create(&th[i], NULL, run, &jobs[i]);
	}
	for (i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		bad += jobs[i].bad;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	st = dlm_get_stats(fd);
	printf("bad=%llu seconds=%.3f faults=%llu populates=%llu swapins=%llu swapouts=%llu drops=%llu store_waits=%llu readaheads=%llu same_filled=%llu lost=%llu sigbus=%llu resident=%llu policy=%u protocol=%u\n",
	       (unsigned long long)bad,
	       t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       (unsigned long long)st.faults, (unsigned long long)st.populates,
	       (unsigned long long)st.swapins, (unsigned long long)st.swapouts,
	       (unsigned long long)st.drops, (unsigned long long)st.store_waits,
	       (unsigned long long)st.readaheads,
	       (unsigned long long)st.same_filled,
	       (unsigned long long)st.lost, (unsigned long long)st.sigbus,
	       (unsigned long long)st.dpages_resident, s.policy, s.protocol);
	return bad ? 1 : 0;
}
