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

int dlm_mpi_parse_proto(const char *s)
{
	unsigned int i;

	for (i = 0; i < sizeof(proto_names) / sizeof(proto_names[0]); i++)
		if (!strcmp(s, proto_names[i]))
			return (int)i;
	return -1;
}

int dlm_mpi_parse_level(const char *s)
{
	unsigned int i;

	for (i = 0; i <= DLM_MPI_MULTIPLE; i++)
		if (!strcmp(s, level_names[i]))
			return (int)i;
	return -1;
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
	unsigned int i;

	for (i = 0; i < sizeof(wait_names) / sizeof(wait_names[0]); i++)
		if (!strcmp(s, wait_names[i]))
			return (int)i;
	return -1;
}

const char *dlm_mpi_wait_name(enum dlm_mpi_wait w)
{
	return w <= DLM_MPI_WAIT_SLEEP ? wait_names[w] : "?";
}

enum dlm_mpi_wait dlm_mpi_resolve_wait(enum dlm_mpi_wait w,
				       const char *library)
{
	if (w != DLM_MPI_WAIT_AUTO)
		return w;
	return strncmp(library, "Open MPI", 8) ? DLM_MPI_WAIT_SLEEP :
						 DLM_MPI_WAIT_POLL;
}
