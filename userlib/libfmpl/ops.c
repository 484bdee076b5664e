// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ops.c - the predefined reductions: sum, max and min of int (i), float
 * (s), double (d), float complex (c) and double complex (z).  max and min
 * of complex numbers compare moduli (as BLACS does); on a tie the value
 * already in inout stays.  Integer sums wrap around (two's complement)
 * instead of overflowing.
 */
#include <complex.h>
#include <math.h>

#include "internal.h"

#define OP(name, T, body)						\
static void name(void *inout, const void *in, size_t n)		\
{									\
	T *a = inout;							\
	const T *b = in;						\
	size_t i;							\
									\
	for (i = 0; i < n; i++) {					\
		body;							\
	}								\
}

#define PUBLIC_OP(name, T)						\
	FMPLLIB_PUBLIC const fmpl_op fmpl_##name = { sizeof(T), op_##name }

OP(op_isum, int, a[i] = (int)((unsigned int)a[i] + (unsigned int)b[i]))
OP(op_ssum, float, a[i] += b[i])
OP(op_dsum, double, a[i] += b[i])
OP(op_csum, float complex, a[i] += b[i])
OP(op_zsum, double complex, a[i] += b[i])

OP(op_imax, int, if (b[i] > a[i]) a[i] = b[i])
OP(op_smax, float, if (b[i] > a[i]) a[i] = b[i])
OP(op_dmax, double, if (b[i] > a[i]) a[i] = b[i])
OP(op_cmax, float complex, if (cabsf(b[i]) > cabsf(a[i])) a[i] = b[i])
OP(op_zmax, double complex, if (cabs(b[i]) > cabs(a[i])) a[i] = b[i])

OP(op_imin, int, if (b[i] < a[i]) a[i] = b[i])
OP(op_smin, float, if (b[i] < a[i]) a[i] = b[i])
OP(op_dmin, double, if (b[i] < a[i]) a[i] = b[i])
OP(op_cmin, float complex, if (cabsf(b[i]) < cabsf(a[i])) a[i] = b[i])
OP(op_zmin, double complex, if (cabs(b[i]) < cabs(a[i])) a[i] = b[i])

PUBLIC_OP(isum, int);
PUBLIC_OP(ssum, float);
PUBLIC_OP(dsum, double);
PUBLIC_OP(csum, float complex);
PUBLIC_OP(zsum, double complex);
PUBLIC_OP(imax, int);
PUBLIC_OP(smax, float);
PUBLIC_OP(dmax, double);
PUBLIC_OP(cmax, float complex);
PUBLIC_OP(zmax, double complex);
PUBLIC_OP(imin, int);
PUBLIC_OP(smin, float);
PUBLIC_OP(dmin, double);
PUBLIC_OP(cmin, float complex);
PUBLIC_OP(zmin, double complex);
