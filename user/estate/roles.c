/* SPDX-License-Identifier: Apache-2.0 */
/* The push roles' SQL, see roles.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "estate/roles.h"

/* Once, whatever the roles of the keys. Entries have no row-level security
 * (PostgreSQL's COPY FROM refuses tables with it); they are insert-only,
 * and estate verify finds an entry added to a record after ingest. Procs
 * rows (plain INSERTs) have it: a push role adds rows to its own signer's
 * records only, and estate verify finds any that its entries do not derive. */
static const char group_sql[] =
	"-- kwitness estate roles: run as the database's owner (the administrator).\n"
	"BEGIN;\n"
	"DO $$ BEGIN\n"
	"  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '" ESTATE_PUSH_GROUP "') THEN\n"
	"    CREATE ROLE " ESTATE_PUSH_GROUP " NOLOGIN;\n"
	"  END IF;\n"
	"END $$;\n"
	"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM " ESTATE_PUSH_GROUP ";\n"
	"GRANT USAGE ON SCHEMA public TO " ESTATE_PUSH_GROUP ";\n"
	"-- Reading what a push looks up: the schema version, whether a record or\n"
	"-- a session is held already, the bundles.\n"
	"GRANT SELECT ON schema_version, records, policies TO " ESTATE_PUSH_GROUP ";\n"
	"-- Writing: insert only. No UPDATE, no DELETE, no TRUNCATE, on any table.\n"
	"GRANT INSERT ON records, entries, procs, policies, rejected TO " ESTATE_PUSH_GROUP ";\n"
	"DO $$ BEGIN\n"
	"  EXECUTE format('GRANT USAGE ON SEQUENCE %s, %s TO " ESTATE_PUSH_GROUP "',\n"
	"    pg_get_serial_sequence('records', 'id'), pg_get_serial_sequence('rejected', 'id'));\n"
	"END $$;\n"
	"-- Row-level security on records: a push role inserts its own signer's\n"
	"-- rows only (the owner, the administrator, is not bound by it).\n"
	"ALTER TABLE records ENABLE ROW LEVEL SECURITY;\n"
	"DROP POLICY IF EXISTS kwitness_read ON records;\n"
	"CREATE POLICY kwitness_read ON records FOR SELECT TO " ESTATE_PUSH_GROUP " USING (true);\n"
	"-- and procs rows of its own signer's records only (estate verify derives\n"
	"-- them again from the entries and finds any it added).\n"
	"ALTER TABLE procs ENABLE ROW LEVEL SECURITY;\n";

static bool role_name_ok(const char *s, size_t n)
{
	if (!n || n > 40)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
			return false;
	return true;
}

int estate_roles_sql(const struct estate_trust *t, struct kw_buf *out, char *err, size_t errlen)
{
	char buf[2048];

	if (kw_buf_puts(out, group_sql))
		return -ENOMEM;
	for (size_t i = 0; i < estate_trust_count(t); i++) {
		const char *file, *tp, *dot;
		size_t n;

		estate_trust_key_at(t, i, &file, &tp);
		dot = strrchr(file, '.');
		n = dot ? (size_t)(dot - file) : strlen(file);
		if (!role_name_ok(file, n)) {
			snprintf(err, errlen, "the key file %.200s does not name a role (want letters, "
				 "digits, '_' or '-' before its extension)", file);
			return -EINVAL;
		}
		/* The thumbprint is base64url: no quote can end the literal. */
		snprintf(buf, sizeof(buf),
			 "-- %s: thumbprint %s\n"
			 "DO $$ BEGIN\n"
			 "  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '" ESTATE_PUSH_PREFIX "%.*s') THEN\n"
			 "    CREATE ROLE \"" ESTATE_PUSH_PREFIX "%.*s\" LOGIN IN ROLE " ESTATE_PUSH_GROUP ";\n"
			 "  END IF;\n"
			 "END $$;\n"
			 "DROP POLICY IF EXISTS \"push_%.*s\" ON records;\n"
			 "CREATE POLICY \"push_%.*s\" ON records FOR INSERT TO \"" ESTATE_PUSH_PREFIX "%.*s\"\n"
			 "  WITH CHECK (signer = '%s');\n"
			 "DROP POLICY IF EXISTS \"push_%.*s\" ON procs;\n"
			 "CREATE POLICY \"push_%.*s\" ON procs FOR INSERT TO \"" ESTATE_PUSH_PREFIX "%.*s\"\n"
			 "  WITH CHECK (EXISTS (SELECT 1 FROM records r WHERE r.id = procs.record_id\n"
			 "    AND r.signer = '%s'));\n",
			 file, tp, (int)n, file, (int)n, file, (int)n, file, (int)n, file, (int)n, file, tp,
			 (int)n, file, (int)n, file, (int)n, file, tp);
		if (kw_buf_puts(out, buf))
			return -ENOMEM;
	}
	return kw_buf_puts(out, "COMMIT;\n") ? -ENOMEM : 0;
}
