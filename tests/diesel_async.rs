//! The generic layer on diesel-async, on every configured backend: `ClaimLease`'s changesets and
//! predicates in statements composed by hand and run by diesel-async's `RunQueryDsl`, on
//! `AsyncPgConnection`, `AsyncMysqlConnection` and `SyncConnectionWrapper<SqliteConnection>`.
//! A claim is one `UPDATE` whose matched-row count says whether it won, a holder's writes are
//! guarded by its token, and time is the database's, as on Diesel's own connections.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod common;

on_every_backend! {
    all: {
        use std::time::Duration;

        use diesel::prelude::*;
        use diesel_async::{AsyncConnection, RunQueryDsl};
        use diesel_lease::prelude::*;

        use crate::common::jobs::lease_jobs;
        use crate::common::unique_id;

        /// A connection of diesel-async's to the backend's test database, its tables made.
        async fn connect() -> AsyncConn {
            backend::pool();
            let mut conn = AsyncConn::establish(backend::url()).await.expect("a connection");
            for setting in SETTINGS {
                diesel::sql_query(*setting).execute(&mut conn).await.expect("a setting");
            }
            conn
        }

        /// A new queued job's key.
        async fn queued_job(conn: &mut AsyncConn) -> String {
            let id = unique_id("async");
            diesel::insert_into(lease_jobs::table)
                .values((lease_jobs::id.eq(&id), lease_jobs::status.eq("queued")))
                .execute(conn)
                .await
                .expect("a queued job");
            id
        }

        /// Claims job `id` for `claim` and starts it, in one `UPDATE`: whether it won.
        async fn claim(conn: &mut AsyncConn, id: &str, claim: &Claim, lease: Lease) -> bool {
            let claimable = lease_jobs::table.claimable(lease);
            let claimed = diesel_lease::update(lease_jobs::table.find(id).filter(claimable))
                .set((lease_jobs::status.eq("running"), lease_jobs::table.taken(claim)))
                .execute(conn)
                .await
                .expect("a claim");
            claimed == 1
        }

        /// Renews job `id` if `claim` holds it: whether it did.
        async fn renew(conn: &mut AsyncConn, id: &str, claim: &Claim) -> bool {
            let held = lease_jobs::table.held_by(claim.token());
            let renewed = diesel_lease::update(lease_jobs::table.find(id).filter(held))
                .set(lease_jobs::table.renewed())
                .execute(conn)
                .await
                .expect("a renewal");
            renewed == 1
        }

        /// Finishes job `id` if `claim` holds it, released and done in one `UPDATE`.
        async fn finish(conn: &mut AsyncConn, id: &str, claim: &Claim) -> bool {
            let held = lease_jobs::table.held_by(claim.token());
            let finished = diesel_lease::update(lease_jobs::table.find(id).filter(held))
                .set((lease_jobs::status.eq("done"), lease_jobs::table.released()))
                .execute(conn)
                .await
                .expect("a finish");
            finished == 1
        }

        /// Job `id`'s status, worker, token and fence.
        async fn job(
            conn: &mut AsyncConn,
            id: &str,
        ) -> (String, Option<String>, Option<String>, i64) {
            lease_jobs::table
                .find(id)
                .select((
                    lease_jobs::status,
                    lease_jobs::worker,
                    lease_jobs::lease_token,
                    lease_jobs::fence,
                ))
                .first(conn)
                .await
                .expect("the job")
        }

        /// Job `id` dated back by `secs`, by the database's clock, as tests age rows instead of
        /// sleeping.
        async fn age(conn: &mut AsyncConn, id: &str, secs: u64) {
            let age = Age::new(Duration::from_secs(secs)).unwrap();
            diesel_lease::update(lease_jobs::table.find(id))
                .set(lease_jobs::table.renewed_ago(age))
                .execute(conn)
                .await
                .expect("the job aged");
        }

        /// Whether job `id`'s lease of a minute is fresh, by the database's clock.
        async fn fresh(conn: &mut AsyncConn, id: &str) -> i64 {
            lease_jobs::table
                .find(id)
                .filter(lease_jobs::table.fresh(minute()))
                .count()
                .get_result(conn)
                .await
                .expect("a count")
        }

        fn minute() -> Lease {
            Lease::from_secs(60).unwrap()
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn claimers_on_their_own_connections_race_for_a_row_and_one_wins() {
            let id = queued_job(&mut connect().await).await;
            let claimers = (0..6).map(|n| {
                let id = id.clone();
                tokio::spawn(async move {
                    let mut conn = connect().await;
                    let worker = Claim::new(&format!("worker-{n}")).unwrap();
                    claim(&mut conn, &id, &worker, minute()).await.then_some(worker)
                })
            });
            let mut winners = Vec::new();
            for claimer in claimers.collect::<Vec<_>>() {
                winners.extend(claimer.await.expect("a claimer"));
            }
            assert_eq!(winners.len(), 1, "one claimer's UPDATE matched the row");
            let (status, worker, token, fence) = job(&mut connect().await, &id).await;
            assert_eq!(status, "running", "the caller's change went in the claim's statement");
            assert_eq!(worker.as_deref(), Some(winners[0].owner()));
            assert_eq!(token.as_deref(), Some(winners[0].token()), "the winner's token");
            assert_eq!(fence, 1, "the fence counts the one claim");
        }

        #[tokio::test]
        async fn a_holder_renews_and_finishes_by_its_token_and_a_stranger_changes_nothing() {
            let conn = &mut connect().await;
            let id = queued_job(conn).await;
            let (holder, stranger) = (Claim::new("holder").unwrap(), Claim::new("stranger").unwrap());
            assert!(claim(conn, &id, &holder, minute()).await);
            assert!(!renew(conn, &id, &stranger).await, "the stranger holds nothing");
            assert!(!finish(conn, &id, &stranger).await, "nor can it finish the job");
            assert_eq!(job(conn, &id).await.0, "running");
            assert!(renew(conn, &id, &holder).await, "the holder renews");
            assert!(finish(conn, &id, &holder).await, "and finishes");
            assert_eq!(job(conn, &id).await, ("done".to_owned(), None, None, 1));
        }

        #[tokio::test]
        async fn a_lease_outlived_by_the_database_clock_is_taken_over_and_its_holder_changes_nothing() {
            let conn = &mut connect().await;
            let id = queued_job(conn).await;
            let (first, second) = (Claim::new("first").unwrap(), Claim::new("second").unwrap());
            assert!(claim(conn, &id, &first, minute()).await);
            assert!(!claim(conn, &id, &second, minute()).await, "a fresh lease is not claimable");
            age(conn, &id, 59).await;
            assert!(!claim(conn, &id, &second, minute()).await, "a second of the lease is left");
            age(conn, &id, 61).await;
            let outlived: i64 = lease_jobs::table
                .find(&id)
                .filter(lease_jobs::table.outlived(minute()))
                .count()
                .get_result(conn)
                .await
                .expect("a count");
            assert_eq!(outlived, 1, "outlived by the database's clock");
            assert!(claim(conn, &id, &second, minute()).await, "taken over");
            assert!(!renew(conn, &id, &first).await, "the first holder renews nothing");
            assert!(!finish(conn, &id, &first).await, "nor finishes the job");
            let (status, worker, _, fence) = job(conn, &id).await;
            assert_eq!((status.as_str(), worker.as_deref(), fence), ("running", Some("second"), 2));
        }

        #[tokio::test]
        async fn a_session_time_zone_changes_no_answer() {
            let conn = &mut connect().await;
            for zone in FAR_TIME_ZONE {
                diesel::sql_query(*zone).execute(conn).await.expect("a far time zone");
            }
            let id = queued_job(conn).await;
            let holder = Claim::new("holder").unwrap();
            assert!(claim(conn, &id, &holder, minute()).await);
            assert_eq!(fresh(conn, &id).await, 1, "claimed now, wherever the session is");
            assert_eq!(fresh(&mut connect().await, &id).await, 1, "and read so in UTC");
            age(conn, &id, 61).await;
            assert_eq!(fresh(&mut connect().await, &id).await, 0, "aged by a minute");
        }
    }
    postgres: {
        type AsyncConn = diesel_async::AsyncPgConnection;
        const SETTINGS: &[&str] = &[];
        const FAR_TIME_ZONE: &[&str] = &["SET TIME ZONE 'Asia/Kathmandu'"];
    }
    mysql: {
        type AsyncConn = diesel_async::AsyncMysqlConnection;
        const SETTINGS: &[&str] = &[];
        const FAR_TIME_ZONE: &[&str] = &["SET time_zone = '+05:45'"];
    }
    sqlite: {
        type AsyncConn =
            diesel_async::sync_connection_wrapper::SyncConnectionWrapper<diesel::SqliteConnection>;
        // The writers of the race wait for each other, as the library's pragmas have them do.
        const SETTINGS: &[&str] = &["PRAGMA busy_timeout = 30000"];
        // SQLite has no session time zone: its clock is UTC.
        const FAR_TIME_ZONE: &[&str] = &[];
    }
}
