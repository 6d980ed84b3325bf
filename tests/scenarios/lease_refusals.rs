// Why a claim of a row was refused, included once per backend by tests/lease.rs (and
// tests/pooler.rs) after scenarios/lease.rs, whose helpers it uses: the row missing, held or not
// claimable, or changed between the claim and its read of why.

#[test]
fn a_refused_claim_says_whether_the_row_is_missing_held_or_not_claimable() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let refusal = |conn: &mut backend::Conn, key: &str, status: &str| {
        let outcome = lease_jobs::table
            .claim_row(key, minute())
            .by(&Claim::new("worker-2").unwrap())
            .filter(lease_jobs::status.eq(status))
            .run::<Job>(conn)
            .unwrap();
        match outcome {
            Claimed::Refused(refused) => {
                assert_eq!(refused.key(), key, "the refusal names the row");
                refused.why().clone()
            }
            Claimed::Won(won) => panic!("won {won:?}"),
        }
    };

    assert_eq!(
        refusal(&mut conn, "no-such-job", "queued"),
        Refusal::NoSuchRow
    );
    assert_eq!(
        refusal(&mut conn, &id, "done"),
        Refusal::NotClaimable,
        "free, but the filter refuses it"
    );
    let holder = Claim::new("worker-1").unwrap();
    claim(&mut conn, &id, &holder, minute()).expect("claim");
    age(&mut conn, &id, Duration::from_secs(20));
    let Refusal::Held(held) = refusal(&mut conn, &id, "running") else {
        panic!("held")
    };
    assert_eq!(
        (held.owner.as_str(), held.token.as_str()),
        ("worker-1", holder.token())
    );
    assert!(
        held.age >= Duration::from_secs(20) && held.age < Duration::from_secs(30),
        "{held:?}"
    );
    assert!(
        held.frees_in <= Duration::from_secs(40) && held.frees_in > Duration::from_secs(30),
        "{held:?}"
    );
    let _: &LeaseHolder = &held;
}

#[test]
fn a_refusal_whose_row_changed_before_its_read_says_what_is_true_free_or_outlived_and_since_when() {
    let mut conn = connection();
    let conn = &mut conn;
    let id = queued_job(conn);
    let holder = Claim::new("worker-1").unwrap();
    claim(conn, &id, &holder, minute()).expect("a free job");
    // A claim with no filter of its own, refused while the row is held; `meanwhile` runs on a
    // connection of its own between the claim and its read of why.
    let refused = |meanwhile: Box<dyn FnOnce(&mut backend::Conn) + Send>| -> Refusal {
        let mut claimant = backend::connect();
        claimant.set_instrumentation(BeforeTheRead::new(move || {
            meanwhile(&mut backend::connect())
        }));
        let outcome = lease_jobs::table
            .claim_row(id.as_str(), minute())
            .by(&Claim::new("worker-2").unwrap())
            .run::<Job>(&mut claimant)
            .unwrap();
        let Claimed::Refused(refused) = outcome else {
            panic!("held, so refused")
        };
        refused.why().clone()
    };
    let selected = |conn: &mut backend::Conn| -> Refusal {
        lease_jobs::table
            .find(&id)
            .select(lease_jobs::table.holder(minute()))
            .first(conn)
            .unwrap()
    };

    // Its lease runs out (dated 75 s back under a 60 s lease) between the claim and its read:
    // outlived 15 s ago.
    let aged = id.clone();
    let refused_then_outlived = refused(Box::new(move |conn| {
        age(conn, &aged, Duration::from_secs(75))
    }));
    for refusal in [refused_then_outlived, selected(conn)] {
        let Refusal::Outlived { owner, token, ago } = &refusal else {
            panic!("outlived, not {refusal:?}")
        };
        assert_eq!(
            (owner.as_str(), token.as_str()),
            ("worker-1", holder.token())
        );
        assert!(
            *ago >= Duration::from_secs(15) && *ago < Duration::from_secs(25),
            "{refusal:?}"
        );
    }

    // The holder releases it between the claim and its read: free, and the words say so, not
    // that a filter refused it.
    let (released, by) = (id.clone(), holder.clone());
    let why = refused_while_fresh(conn, &id, &holder, || {
        refused(Box::new(move |conn| {
            let release = lease_jobs::table
                .held_rows(&by, vec![released.clone()])
                .release();
            assert_eq!(release.run(conn).unwrap(), [released.as_str()]);
        }))
    });
    assert_eq!(why, Refusal::Free);
    assert_eq!(why.to_string(), "free: no claim holds it now");
    assert_eq!(selected(conn), Refusal::Free);
}

/// A refusal by `refused` of the row `id`, after its lease was made fresh again for `holder`.
fn refused_while_fresh<R>(
    conn: &mut backend::Conn,
    id: &str,
    holder: &Claim,
    refused: impl FnOnce() -> R,
) -> R {
    assert_eq!(
        lease_jobs::table
            .held_rows(holder, vec![id.to_owned()])
            .renew()
            .run(conn)
            .unwrap(),
        [id.to_owned()],
        "still held by its first claim"
    );
    refused()
}
