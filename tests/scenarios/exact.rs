// Owners and tokens compared exactly, whatever the column's collation, included once per backend
// by tests/lease.rs (`backend` names the backend's support module): `case_jobs`'s owner and
// token columns ignore case (MySQL's and MariaDB's default collation, which on MariaDB ignores
// trailing spaces too; SQLite's NOCASE; an ICU collation on PostgreSQL), so a plain `=` would
// take `Worker-1` for `worker-1`.
use diesel::prelude::*;
use diesel_lease::__private::KeeperRenewal;
use diesel_lease::prelude::*;

use crate::common::jobs::case_jobs;
use crate::common::unique_id;

fn connection() -> diesel::r2d2::PooledConnection<diesel::r2d2::ConnectionManager<backend::Conn>> {
    backend::pool().get().expect("a pooled connection")
}

fn minute() -> Lease {
    Lease::from_secs(60).expect("a lease")
}

/// A new queued job of `case_jobs`.
fn new_job(conn: &mut backend::Conn) -> String {
    let id = unique_id("job");
    diesel::insert_into(case_jobs::table)
        .values((case_jobs::id.eq(&id), case_jobs::status.eq("queued")))
        .execute(conn)
        .expect("a job");
    id
}

/// A new job, won by `claim`.
fn held_job(conn: &mut backend::Conn, claim: &Claim) -> String {
    let id = new_job(conn);
    let won = case_jobs::table
        .claim_row(id.clone(), minute())
        .by(claim)
        .returning(case_jobs::id)
        .run::<String>(conn)
        .expect("a claim");
    assert!(won.is_won(), "a free job is won");
    id
}

/// Job `id`'s owner, token and claim time, as text.
fn lease_of(conn: &mut backend::Conn, id: &str) -> (Option<String>, Option<String>, String) {
    let (owner, token, at) = case_jobs::table
        .find(id)
        .select((
            case_jobs::worker,
            case_jobs::lease_token,
            case_jobs::leased_at,
        ))
        .first::<(
            Option<String>,
            Option<String>,
            Option<chrono::DateTime<chrono::Utc>>,
        )>(conn)
        .expect("the job");
    (owner, token, format!("{at:?}"))
}

/// The premise of every test here: the column's own collation takes `upper` for `lower`.
fn collation_ignores_case(conn: &mut backend::Conn, upper: &str, lower: &str) {
    let matched: i64 = case_jobs::table
        .filter(case_jobs::worker.eq(lower))
        .count()
        .get_result(conn)
        .expect("a count");
    let upper_held: i64 = case_jobs::table
        .filter(case_jobs::worker.eq(upper))
        .count()
        .get_result(conn)
        .expect("a count");
    assert!(
        matched >= 2 && upper_held == matched,
        "the owner column ignores case: {lower} matched {matched} rows, {upper} {upper_held}"
    );
}

#[test]
fn a_release_by_owner_frees_that_owners_rows_alone_whatever_the_columns_collation() {
    let mut conn = connection();
    let name = unique_id("worker");
    let (lower, upper) = (name.clone(), format!("W{}", &name[1..]));
    let theirs = held_job(&mut conn, &Claim::new(&upper).unwrap());
    let mine = held_job(&mut conn, &Claim::new(&lower).unwrap());
    // A row another writer gave an owner with a trailing space, which `PAD SPACE`
    // collations (MariaDB's default) take for the owner without it.
    let padded = new_job(&mut conn);
    diesel::update(case_jobs::table.find(&padded))
        .set((
            case_jobs::worker.eq(format!("{lower} ")),
            case_jobs::lease_token.eq(unique_id("token")),
            case_jobs::leased_at.eq(diesel_lease::now()),
        ))
        .execute(&mut *conn)
        .unwrap();
    collation_ignores_case(&mut conn, &upper, &lower);

    let freed = case_jobs::table
        .held_by_owner(&lower)
        .release()
        .set(case_jobs::status.eq("done"))
        .run(&mut *conn)
        .unwrap();

    assert_eq!(freed, [mine.as_str()], "{lower}'s row alone");
    assert_eq!(lease_of(&mut conn, &mine).0, None);
    assert_eq!(lease_of(&mut conn, &theirs).0, Some(upper.clone()));
    assert_eq!(lease_of(&mut conn, &padded).0, Some(format!("{lower} ")));
    let freed = case_jobs::table
        .held_by_owner(&upper)
        .release()
        .run(&mut *conn)
        .unwrap();
    assert_eq!(freed, [theirs], "{upper}'s row, by its own name");
}

#[test]
fn owners_differing_only_in_case_are_counted_apart() {
    let mut conn = connection();
    let name = unique_id("worker");
    let (lower, upper) = (name.clone(), format!("W{}", &name[1..]));
    held_job(&mut conn, &Claim::new(&upper).unwrap());
    held_job(&mut conn, &Claim::new(&lower).unwrap());
    held_job(&mut conn, &Claim::new(&lower).unwrap());
    collation_ignores_case(&mut conn, &upper, &lower);

    let per_owner: Vec<(String, i64)> = case_jobs::table
        .held_per_owner()
        .run(&mut *conn)
        .unwrap()
        .into_iter()
        .filter(|(owner, _)| owner.eq_ignore_ascii_case(&name))
        .collect();

    let mut expected = vec![(upper, 1), (lower, 2)];
    expected.sort();
    let mut per_owner = per_owner;
    per_owner.sort();
    assert_eq!(per_owner, expected);
}

#[test]
fn a_token_differing_only_in_case_or_by_a_trailing_space_cannot_write_the_holders_rows() {
    let mut conn = connection();
    let token = unique_id("Token");
    let holder = Claim::with_token("worker-1", &token).unwrap();
    let impostor = Claim::with_token("worker-1", &token.to_lowercase()).unwrap();
    let (one, two) = (held_job(&mut conn, &holder), held_job(&mut conn, &holder));
    let both = vec![one.clone(), two.clone()];
    let before = (lease_of(&mut conn, &one), lease_of(&mut conn, &two));
    let by_the_collation: i64 = case_jobs::table
        .filter(case_jobs::lease_token.eq(impostor.token()))
        .count()
        .get_result(&mut *conn)
        .unwrap();
    assert_eq!(by_the_collation, 2, "the token column ignores case");

    for keys in [vec![one.clone()], both.clone()] {
        let held = case_jobs::table.held_rows(&impostor, keys.clone());
        assert!(held.renew().run(&mut *conn).unwrap().is_empty(), "{keys:?}");
        let updated = held
            .update()
            .set(case_jobs::status.eq("done"))
            .run(&mut *conn)
            .unwrap();
        assert!(updated.is_empty(), "{keys:?}");
        assert!(
            held.release().run(&mut *conn).unwrap().is_empty(),
            "{keys:?}"
        );
    }
    for token in [impostor.token().to_owned(), format!("{token} ")] {
        let renewal = |keys: &[&String]| {
            KeeperRenewal::new(
                case_jobs::table,
                keys.iter()
                    .map(|key| ((*key).clone(), token.clone()))
                    .collect(),
            )
            .run(&mut *connection())
            .unwrap()
        };
        assert!(
            renewal(&[&one]).is_empty(),
            "a keeper's renewal by {token:?}"
        );
        assert!(renewal(&[&one, &two]).is_empty(), "of both, by {token:?}");
        let changed = diesel::update(case_jobs::table.filter(case_jobs::table.held_by(&token)))
            .set(case_jobs::status.eq("done"))
            .execute(&mut *conn)
            .unwrap();
        assert_eq!(changed, 0, "the public predicate, with {token:?}");
    }

    assert_eq!(
        (lease_of(&mut conn, &one), lease_of(&mut conn, &two)),
        before,
        "untouched"
    );
    let status: Vec<String> = case_jobs::table
        .filter(case_jobs::id.eq_any(&both))
        .select(case_jobs::status)
        .load(&mut *conn)
        .unwrap();
    assert_eq!(status, ["queued", "queued"], "no update reached them");
    assert_eq!(
        case_jobs::table
            .held_rows(&holder, both)
            .renew()
            .run(&mut *conn)
            .unwrap()
            .len(),
        2,
        "the holder's own token still holds both"
    );
}
