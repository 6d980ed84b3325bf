// The tables and rows the measurements set up on one backend's connection, and what they read
// of its settings and plans: untimed, beside the operations of ops.rs, in the same module.
mod fixtures {
    use diesel::prelude::*;
    use diesel::sql_types::{BigInt, Text};
    use diesel_lease_agent::schema::{conversations, user_settings};

    use super::{Conn, B};
    use crate::backend::Backend;
    use crate::shared::Res;
    use crate::suite::HOT;

    #[derive(QueryableByName)]
    struct Count {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }

    /// A line of a plan: the columns of [`Backend::PLAN_COLUMNS`] that are not NULL, joined.
    struct PlanLine(String);

    impl QueryableByName<<Conn as Connection>::Backend> for PlanLine {
        fn build<'a>(
            row: &impl diesel::row::NamedRow<'a, <Conn as Connection>::Backend>,
        ) -> diesel::deserialize::Result<Self> {
            let mut parts = Vec::new();
            for column in B::PLAN_COLUMNS {
                let value = diesel::row::NamedRow::get::<
                    diesel::sql_types::Nullable<Text>,
                    Option<String>,
                >(row, column)?;
                parts.extend(value.map(|value| format!("{column}: {value}")));
            }
            Ok(PlanLine(parts.join(", ")))
        }
    }

    #[derive(QueryableByName)]
    struct Setting {
        #[diesel(sql_type = Text)]
        value: String,
    }

    pub fn cleanup_agent_rows(conn: &mut Conn) -> Res<()> {
        diesel::sql_query("DELETE FROM conversations WHERE id LIKE 'bench-%'").execute(conn)?;
        diesel::sql_query("DELETE FROM user_settings WHERE user_id LIKE 'bench-%'").execute(conn)?;
        Ok(())
    }

    pub fn setup(conn: &mut Conn) -> Res<()> {
        diesel::sql_query("DROP TABLE IF EXISTS bench_leases").execute(conn)?;
        diesel::sql_query(B::DDL).execute(conn)?;
        let values: Vec<String> = (1..=32)
            .chain([HOT])
            .map(|id| format!("({id}, 'queued')"))
            .collect();
        diesel::sql_query(format!(
            "INSERT INTO bench_leases (id, status) VALUES {}",
            values.join(", ")
        ))
        .execute(conn)?;
        diesel_lease_agent::run_migrations(conn)?;
        cleanup_agent_rows(conn)
    }

    pub fn settings(conn: &mut Conn) -> Res<Vec<(String, String)>> {
        let mut settings = Vec::new();
        for (label, query) in B::SETTINGS {
            let value = diesel::sql_query(*query).get_result::<Setting>(conn)?.value;
            settings.push(((*label).to_owned(), value));
        }
        Ok(settings)
    }

    pub fn agent_rows(conn: &mut Conn, prefix: &str, count: usize) -> Res<Vec<(String, String)>> {
        let ids: Vec<(String, String)> = (0..count)
            .map(|n| (format!("{prefix}-chat-{n}"), format!("{prefix}-user-{n}")))
            .collect();
        for chunk in ids.chunks(500) {
            let chats: Vec<_> = chunk
                .iter()
                .map(|(chat, user)| (conversations::id.eq(chat), conversations::user_id.eq(user)))
                .collect();
            diesel::insert_into(conversations::table)
                .values(&chats)
                .execute(conn)?;
            let users: Vec<_> = chunk
                .iter()
                .map(|(_, user)| user_settings::user_id.eq(user))
                .collect();
            diesel::insert_into(user_settings::table)
                .values(&users)
                .execute(conn)?;
        }
        Ok(ids)
    }

    pub fn count_holders(conn: &mut Conn) -> Res<i64> {
        Ok(diesel::sql_query(
            "SELECT COUNT(*) AS n FROM conversations c JOIN user_settings u ON u.user_id = c.user_id \
             WHERE c.id LIKE 'bench-h-%' AND c.busy_turn_ref LIKE 'bench-h-turn-%' \
             AND u.busy_turn_ref = c.busy_turn_ref",
        )
        .get_result::<Count>(conn)?
        .n)
    }

    pub fn growth_setup(conn: &mut Conn, rows: i64, done: i64) -> Res<()> {
        diesel::sql_query("DROP TABLE IF EXISTS bench_growth").execute(conn)?;
        diesel::sql_query(B::GROWTH_DDL[0]).execute(conn)?;
        let ids: Vec<i64> = (1..=rows).collect();
        conn.transaction(|conn| {
            for chunk in ids.chunks(1_000) {
                let values: Vec<String> = chunk
                    .iter()
                    .map(|id| format!("({id}, '{}')", if *id <= done { "done" } else { "queued" }))
                    .collect();
                diesel::sql_query(format!(
                    "INSERT INTO bench_growth (id, status) VALUES {}",
                    values.join(", ")
                ))
                .execute(conn)?;
            }
            Ok::<_, diesel::result::Error>(())
        })?;
        // The indexes after the rows, as a table of this size would be built.
        for ddl in &B::GROWTH_DDL[1..] {
            diesel::sql_query(*ddl).execute(conn)?;
        }
        for settle in B::GROWTH_SETTLE {
            diesel::sql_query(*settle).execute(conn)?;
        }
        Ok(())
    }

    pub fn growth_plan(conn: &mut Conn) -> Res<String> {
        let lines = diesel::sql_query(format!(
            "{} SELECT id FROM bench_growth WHERE status = 'queued' \
             AND (claim_token IS NULL OR claimed_at IS NULL) ORDER BY id LIMIT 10",
            B::EXPLAIN
        ))
        .load::<PlanLine>(conn)?;
        Ok(lines
            .into_iter()
            .map(|line| line.0)
            .collect::<Vec<_>>()
            .join("\n"))
    }

    pub fn kept_setup(conn: &mut Conn, rows: i64) -> Res<()> {
        diesel::sql_query("DROP TABLE IF EXISTS bench_kept").execute(conn)?;
        diesel::sql_query(B::KEPT_DDL).execute(conn)?;
        let ids: Vec<i64> = (1..=rows).collect();
        for chunk in ids.chunks(500) {
            let values: Vec<String> = chunk.iter().map(|id| format!("({id})")).collect();
            diesel::sql_query(format!(
                "INSERT INTO bench_kept (id) VALUES {}",
                values.join(", ")
            ))
            .execute(conn)?;
        }
        Ok(())
    }

}
