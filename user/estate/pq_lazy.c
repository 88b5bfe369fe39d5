/* SPDX-License-Identifier: Apache-2.0 */
/* libpq loaded when the first PostgreSQL connection is made, not at every
 * start of kwitness: libpq brings 21 shared libraries (Kerberos, LDAP,
 * GnuTLS, ...), about half of the process start of every command (16 of
 * 31 ms of CPU, 11 of 22 ms of it system time, on the 2-core test VM).
 * These are the libpq functions postgres.c calls, under their own names,
 * each calling libpq's through a pointer found at the first PQconnectdb.
 * A libpq function used without a line here fails to link: add it. */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

#include <libpq-fe.h>

#define LIBPQ_SONAME "libpq.so.5"

static struct {
	__typeof__(PQconnectdb) *connectdb;
	__typeof__(PQfinish) *finish;
	__typeof__(PQstatus) *status;
	__typeof__(PQerrorMessage) *error_message;
	__typeof__(PQsetNoticeProcessor) *set_notice_processor;
	__typeof__(PQexec) *exec;
	__typeof__(PQexecParams) *exec_params;
	__typeof__(PQgetResult) *get_result;
	__typeof__(PQputCopyData) *put_copy_data;
	__typeof__(PQputCopyEnd) *put_copy_end;
	__typeof__(PQresultStatus) *result_status;
	__typeof__(PQresultErrorMessage) *result_error_message;
	__typeof__(PQclear) *clear;
	__typeof__(PQntuples) *ntuples;
	__typeof__(PQnfields) *nfields;
	__typeof__(PQfname) *fname;
	__typeof__(PQgetvalue) *getvalue;
	__typeof__(PQgetisnull) *getisnull;
} pq;

static pthread_once_t pq_once = PTHREAD_ONCE_INIT;
static char pq_why[256] = LIBPQ_SONAME " was not loaded\n";
static int pq_loaded;

static void pq_load(void)
{
	static const struct {
		const char *name;
		size_t off;
	} fns[] = {
		{ "PQconnectdb", offsetof(__typeof__(pq), connectdb) },
		{ "PQfinish", offsetof(__typeof__(pq), finish) },
		{ "PQstatus", offsetof(__typeof__(pq), status) },
		{ "PQerrorMessage", offsetof(__typeof__(pq), error_message) },
		{ "PQsetNoticeProcessor", offsetof(__typeof__(pq), set_notice_processor) },
		{ "PQexec", offsetof(__typeof__(pq), exec) },
		{ "PQexecParams", offsetof(__typeof__(pq), exec_params) },
		{ "PQgetResult", offsetof(__typeof__(pq), get_result) },
		{ "PQputCopyData", offsetof(__typeof__(pq), put_copy_data) },
		{ "PQputCopyEnd", offsetof(__typeof__(pq), put_copy_end) },
		{ "PQresultStatus", offsetof(__typeof__(pq), result_status) },
		{ "PQresultErrorMessage", offsetof(__typeof__(pq), result_error_message) },
		{ "PQclear", offsetof(__typeof__(pq), clear) },
		{ "PQntuples", offsetof(__typeof__(pq), ntuples) },
		{ "PQnfields", offsetof(__typeof__(pq), nfields) },
		{ "PQfname", offsetof(__typeof__(pq), fname) },
		{ "PQgetvalue", offsetof(__typeof__(pq), getvalue) },
		{ "PQgetisnull", offsetof(__typeof__(pq), getisnull) },
	};
	void *h = dlopen(LIBPQ_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(pq_why, sizeof(pq_why), "%s\n", dlerror());
		return;
	}
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		void *f = dlsym(h, fns[i].name);

		if (!f) {
			snprintf(pq_why, sizeof(pq_why), "%s: no %s\n", LIBPQ_SONAME, fns[i].name);
			return;
		}
		*(void **)((char *)&pq + fns[i].off) = f;
	}
	pq_loaded = 1;
}

PGconn *PQconnectdb(const char *conninfo)
{
	pthread_once(&pq_once, pq_load);
	if (pq_loaded)
		return pq.connectdb(conninfo);
	/* The caller's message can only say it could not connect: why, here. */
	fprintf(stderr, "kwitness: PostgreSQL needs %s", pq_why);
	return NULL;
}

/* Without libpq there is no connection, and these see only NULL. */
void PQfinish(PGconn *conn)
{
	if (pq_loaded)
		pq.finish(conn);
}

ConnStatusType PQstatus(const PGconn *conn)
{
	return pq_loaded ? pq.status(conn) : CONNECTION_BAD;
}

char *PQerrorMessage(const PGconn *conn)
{
	return pq_loaded ? pq.error_message(conn) : pq_why;
}

PQnoticeProcessor PQsetNoticeProcessor(PGconn *conn, PQnoticeProcessor proc, void *arg)
{
	return pq_loaded ? pq.set_notice_processor(conn, proc, arg) : NULL;
}

PGresult *PQexec(PGconn *conn, const char *query)
{
	return pq_loaded ? pq.exec(conn, query) : NULL;
}

PGresult *PQexecParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
		       const char *const *paramValues, const int *paramLengths,
		       const int *paramFormats, int resultFormat)
{
	return pq_loaded ? pq.exec_params(conn, command, nParams, paramTypes, paramValues,
					  paramLengths, paramFormats, resultFormat) :
			   NULL;
}

PGresult *PQgetResult(PGconn *conn)
{
	return pq_loaded ? pq.get_result(conn) : NULL;
}

int PQputCopyData(PGconn *conn, const char *buffer, int nbytes)
{
	return pq_loaded ? pq.put_copy_data(conn, buffer, nbytes) : -1;
}

int PQputCopyEnd(PGconn *conn, const char *errormsg)
{
	return pq_loaded ? pq.put_copy_end(conn, errormsg) : -1;
}

ExecStatusType PQresultStatus(const PGresult *res)
{
	return pq_loaded ? pq.result_status(res) : PGRES_FATAL_ERROR;
}

char *PQresultErrorMessage(const PGresult *res)
{
	return pq_loaded ? pq.result_error_message(res) : pq_why;
}

void PQclear(PGresult *res)
{
	if (pq_loaded)
		pq.clear(res);
}

int PQntuples(const PGresult *res)
{
	return pq_loaded ? pq.ntuples(res) : 0;
}

int PQnfields(const PGresult *res)
{
	return pq_loaded ? pq.nfields(res) : 0;
}

char *PQfname(const PGresult *res, int field_num)
{
	return pq_loaded ? pq.fname(res, field_num) : NULL;
}

char *PQgetvalue(const PGresult *res, int tup_num, int field_num)
{
	return pq_loaded ? pq.getvalue(res, tup_num, field_num) : NULL;
}

int PQgetisnull(const PGresult *res, int tup_num, int field_num)
{
	return pq_loaded ? pq.getisnull(res, tup_num, field_num) : 1;
}
