// SPDX-License-Identifier: GPL-2.0
/*
 * test-mpiopts - dlmd's MPI option words (mpi_opts.c, no MPI needed): the
 * names parse back to their values, unknown words are refused, and
 * --mpi-server-wait auto resolves by the node's ranks and CPUs.  TAP.
 */
#include <string.h>

#include "dlm_mpi.h"
#include "tap.h"

static void test_names(void)
{
	static const char *const waits[] = { "auto", "poll", "sleep" };
	static const char *const protos[] = { "auto", "as1", "as2", "cs" };
	int i, bad;

	bad = 0;
	for (i = 0; i < 3; i++)
		bad += dlm_mpi_parse_wait(waits[i]) != i ||
		       strcmp(dlm_mpi_wait_name(i), waits[i]);
	tap_ok(!bad, "the server waits' names parse back to their values");
	bad = 0;
	for (i = 0; i < 4; i++)
		bad += dlm_mpi_parse_proto(protos[i]) != i ||
		       strcmp(dlm_mpi_proto_name(i), protos[i]);
	tap_ok(!bad, "the protocols' names parse back to their values");
	tap_ok(dlm_mpi_parse_level("funneled") == DLM_MPI_FUNNELED &&
	       !strcmp(dlm_mpi_level_name(DLM_MPI_SERIALIZED), "serialized"),
	       "a thread level's name parses, and is named back");
	tap_ok(dlm_mpi_parse_wait("spin") < 0 && dlm_mpi_parse_wait("") < 0 &&
	       dlm_mpi_parse_wait("Sleep") < 0 && dlm_mpi_parse_proto("as3") < 0 &&
	       dlm_mpi_parse_level("single ") < 0,
	       "unknown words are refused (-1)");
	tap_ok(!strcmp(dlm_mpi_wait_name(7), "?"),
	       "an out-of-range wait is named ?");
}

static void test_resolve(void)
{
	static const struct {
		int ranks, cpus;
		enum dlm_mpi_wait want;
		const char *why;
	} cases[] = {
		{ 3, 2, DLM_MPI_WAIT_SLEEP, "3 ranks on 2 CPUs sleep" },
		{ 2, 2, DLM_MPI_WAIT_SLEEP,
		  "as many ranks as CPUs sleep (the program needs one too)" },
		{ 3, 4, DLM_MPI_WAIT_POLL, "3 ranks on 4 CPUs poll" },
		{ 1, 64, DLM_MPI_WAIT_POLL,
		  "one server rank on a 64-CPU node polls" },
		{ 0, 8, DLM_MPI_WAIT_SLEEP, "unknown ranks sleep" },
		{ 2, 0, DLM_MPI_WAIT_SLEEP, "unknown CPUs sleep" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		tap_ok(dlm_mpi_resolve_wait(DLM_MPI_WAIT_AUTO, cases[i].ranks,
					    cases[i].cpus) == cases[i].want,
		       "auto: %s", cases[i].why);
	tap_ok(dlm_mpi_resolve_wait(DLM_MPI_WAIT_POLL, 3, 2) ==
	       DLM_MPI_WAIT_POLL &&
	       dlm_mpi_resolve_wait(DLM_MPI_WAIT_SLEEP, 1, 64) ==
	       DLM_MPI_WAIT_SLEEP,
	       "poll and sleep stay what they were asked to be");
}

int main(void)
{
	tap_plan(12);
	test_names();
	test_resolve();
	return tap_done();
}
