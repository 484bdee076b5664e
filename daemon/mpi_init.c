// SPDX-License-Identifier: GPL-2.0
/*
 * mpi_init.c - MPI_Init_thread, the protocol the thread level allows,
 * waiting for MPI requests without burning a core, and ending the job.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "mpi_priv.h"

struct dlm_mpi_info mpi_info;

static int to_mpi_level(enum dlm_mpi_level l)
{
	switch (l) {
	case DLM_MPI_SINGLE:
		return MPI_THREAD_SINGLE;
	case DLM_MPI_FUNNELED:
		return MPI_THREAD_FUNNELED;
	case DLM_MPI_SERIALIZED:
		return MPI_THREAD_SERIALIZED;
	default:
		return MPI_THREAD_MULTIPLE;
	}
}

static enum dlm_mpi_level from_mpi_level(int l)
{
	if (l == MPI_THREAD_SINGLE)
		return DLM_MPI_SINGLE;
	if (l == MPI_THREAD_FUNNELED)
		return DLM_MPI_FUNNELED;
	if (l == MPI_THREAD_SERIALIZED)
		return DLM_MPI_SERIALIZED;
	return DLM_MPI_MULTIPLE;
}

/* The thread level a protocol needs. */
static enum dlm_mpi_level needs(enum dlm_mpi_proto p)
{
	return p == DLM_MPI_AS1 ? DLM_MPI_SERIALIZED :
	       p == DLM_MPI_AS2 ? DLM_MPI_FUNNELED : DLM_MPI_SINGLE;
}

/* This job's ranks on this node, and the node's online CPUs (0: unknown). */
static void count_node(struct dlm_mpi_info *info)
{
	MPI_Comm node;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	info->node_cpus = cpus > 0 && cpus < INT_MAX ? (int)cpus : 0;
	if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
				MPI_INFO_NULL, &node) != MPI_SUCCESS)
		return;
	if (MPI_Comm_size(node, &info->node_ranks) != MPI_SUCCESS)
		info->node_ranks = 0;
	MPI_Comm_free(&node);
}

int dlm_mpi_init(int *argc, char ***argv, enum dlm_mpi_proto proto,
		 enum dlm_mpi_level level, struct dlm_mpi_info *info,
		 char *err, size_t errlen)
{
	char lib[MPI_MAX_LIBRARY_VERSION_STRING];
	int provided, len = 0;

	memset(info, 0, sizeof(*info));
	if (level == DLM_MPI_LEVEL_DEFAULT)
		level = proto == DLM_MPI_AUTO ? DLM_MPI_MULTIPLE : needs(proto);
	info->requested = level;
	if (MPI_Init_thread(argc, argv, to_mpi_level(level), &provided) !=
	    MPI_SUCCESS) {
		snprintf(err, errlen, "MPI_Init_thread failed: start dlmd with mpirun (see dlmd --help)");
		return -1;
	}
	/* Errors come back as codes: dlmd decides what is fatal. */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, &info->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &info->size);
	MPI_Get_library_version(lib, &len);
	lib[len < (int)sizeof(lib) ? len : (int)sizeof(lib) - 1] = '\0';
	lib[strcspn(lib, "\n,")] = '\0';
	len = (int)strlen(lib);
	if (len >= (int)sizeof(info->library))
		len = (int)sizeof(info->library) - 1;
	memcpy(info->library, lib, (size_t)len);
	info->library[len] = '\0';
	info->provided = from_mpi_level(provided);
	count_node(info);

	if (proto == DLM_MPI_AUTO)
		proto = info->provided >= DLM_MPI_SERIALIZED ? DLM_MPI_AS1 :
			info->provided == DLM_MPI_FUNNELED ? DLM_MPI_AS2 :
			DLM_MPI_CS;
	if (info->provided < needs(proto)) {
		snprintf(err, errlen, "--mpi-protocol %s needs MPI_THREAD_%s but %s provides only MPI_THREAD_%s: use --mpi-protocol auto",
			 dlm_mpi_proto_name(proto), needs(proto) ==
			 DLM_MPI_SERIALIZED ? "SERIALIZED" : "FUNNELED",
			 info->library,
			 info->provided == DLM_MPI_SINGLE ? "SINGLE" : "FUNNELED");
		MPI_Finalize();
		return -1;
	}
	info->proto = proto;
	mpi_info = *info;
	return 0;
}

void mpi_backoff(unsigned int *round, unsigned int max_sleep_us)
{
	struct timespec ts = { 0, 0 };
	unsigned int us;

	/* Spin a little (a reply is often microseconds away), then sleep. */
	if (++*round < 64)
		return;
	us = (*round - 63) * 5;
	if (us > max_sleep_us)
		us = max_sleep_us;
	ts.tv_nsec = (long)us * 1000;
	nanosleep(&ts, NULL);
}

int mpi_wait_polite(MPI_Request *req, MPI_Status *st, unsigned int max_sleep_us)
{
	unsigned int round = 0;
	int done = 0, r;

	for (;;) {
		r = MPI_Test(req, &done, st);
		if (r != MPI_SUCCESS || done)
			return r;
		mpi_backoff(&round, max_sleep_us);
	}
}

void dlm_mpi_abort(const char *why)
{
	log_error("ending the MPI job: the kernel fails the outstanding requests (SIGBUS in the programs)",
		  "why=\"%s\"", why);
	/*
	 * The launcher forwards this rank's stderr through a pipe that
	 * MPI_Abort may close first (seen under MPICH's hydra, about one
	 * abort in thirty): give it a moment to carry the reason out.
	 */
	nanosleep(&(struct timespec){ .tv_nsec = 200 * 1000 * 1000 }, NULL);
	MPI_Abort(MPI_COMM_WORLD, 1);
	abort();	/* MPI_Abort does not return */
}
