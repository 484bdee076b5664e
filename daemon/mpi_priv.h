/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpi_priv.h - what the mpi_*.c files share: the message layout of the
 * mpi transport and a polite way to wait for an MPI request.
 *
 * Rank 0 sends every request as a 32-byte wire.h header on MPI_COMM_WORLD
 * with tag MPI_TAG_HDR; the header's tag field names the per-transfer MPI
 * tag T (MPI_TAG_XFER_BASE .. + MPI_TAG_XFER_SPAN - 1) of what follows:
 *
 *   HELLO  offset = bytes wanted  -> server: 16-byte wire_hello on T
 *   READ   len, offset            -> server: the len bytes on T (from its
 *                                    memory, no staging), or an empty
 *                                    message on T if refused
 *   WRITE  len, offset; rank 0 then sends the len bytes on T (straight from
 *                                    the frame pool) -> no reply: rank 0
 *                                    checked the range, and a server that
 *                                    cannot store them ends the job
 *   BYE                           -> no reply; the server leaves its loop
 *
 * MPI keeps messages between two ranks with one tag in order, and T is
 * unique among a server's transfers in flight, so replies cannot be
 * matched to the wrong transfer.
 */
#ifndef DLM_MPI_PRIV_H
#define DLM_MPI_PRIV_H

#include <mpi.h>
#include <stdint.h>

#include "dlm_mpi.h"

#define MPI_TAG_HDR		1
#define MPI_TAG_XFER_BASE	16
#define MPI_TAG_XFER_SPAN	32000	/* MPI guarantees tags up to 32767 */

/*
 * Wait for REQ without spinning a CPU away: MPI_Test in a loop, sleeping
 * between tests from 0 up to MAX_SLEEP_US (a memory server waits for the
 * next request like this; a spinning MPI_Wait would take a core from the
 * program).  Returns the MPI error code.
 */
int mpi_wait_polite(MPI_Request *req, MPI_Status *st, unsigned int max_sleep_us);

/* One backoff step: ROUND counts the idle tests since the last progress. */
void mpi_backoff(unsigned int *round, unsigned int max_sleep_us);

extern struct dlm_mpi_info mpi_info;

#endif /* DLM_MPI_PRIV_H */
