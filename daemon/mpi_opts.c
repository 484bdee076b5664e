// SPDX-License-Identifier: GPL-2.0
/*
 * mpi_opts.c - names of the MPI protocols, thread levels and server waits,
 * for dlmd's options and logs (in every dlmd build: no MPI needed).
 */
#include <string.h>

#include "dlm_mpi.h"

static const char *const proto_names[] = {
	[DLM_MPI_AUTO] = "auto", [DLM_MPI_AS1] = "as1",
	[DLM_MPI_AS2] = "as2", [DLM_MPI_CS] = "cs",
};

static const char *const level_names[] = {
	[DLM_MPI_SINGLE] = "single", [DLM_MPI_FUNNELED] = "funneled",
	[DLM_MPI_SERIALIZED] = "serialized", [DLM_MPI_MULTIPLE] = "multiple",
	[DLM_MPI_LEVEL_DEFAULT] = "multiple",
};

static const char *const wait_names[] = {
	[DLM_MPI_WAIT_AUTO] = "auto", [DLM_MPI_WAIT_POLL] = "poll",
	[DLM_MPI_WAIT_SLEEP] = "sleep",
};

/* The index of S among the first N of NAMES, or -1. */
static int lookup(const char *const *names, unsigned int n, const char *s)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	return -1;
}

int dlm_mpi_parse_proto(const char *s)
{
	return lookup(proto_names, DLM_MPI_CS + 1, s);
}

int dlm_mpi_parse_level(const char *s)
{
	return lookup(level_names, DLM_MPI_MULTIPLE + 1, s);
}

const char *dlm_mpi_proto_name(enum dlm_mpi_proto p)
{
	return p <= DLM_MPI_CS ? proto_names[p] : "?";
}

const char *dlm_mpi_level_name(enum dlm_mpi_level l)
{
	return l <= DLM_MPI_LEVEL_DEFAULT ? level_names[l] : "?";
}

int dlm_mpi_parse_wait(const char *s)
{
	return lookup(wait_names, DLM_MPI_WAIT_SLEEP + 1, s);
}

const char *dlm_mpi_wait_name(enum dlm_mpi_wait w)
{
	return w <= DLM_MPI_WAIT_SLEEP ? wait_names[w] : "?";
}

enum dlm_mpi_wait dlm_mpi_resolve_wait(enum dlm_mpi_wait w, int node_ranks,
				       int node_cpus)
{
	if (w != DLM_MPI_WAIT_AUTO)
		return w;
	/* Unknown counts: sleeping is the safe side. */
	if (node_ranks < 1 || node_cpus < 1 || node_ranks >= node_cpus)
		return DLM_MPI_WAIT_SLEEP;
	return DLM_MPI_WAIT_POLL;
}
