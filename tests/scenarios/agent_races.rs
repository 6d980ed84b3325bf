// The agent locks raced for, included once per backend by tests/agent.rs (and tests/pooler.rs)
// after scenarios/agent.rs, whose helpers it uses: turns for one chat, turns of one new user in
// many chats, turns and clicks of one user, sweepers of one lost turn, and ten thousand turns
// holding their locks at once through a pool of four.

#[test]
fn thirty_two_turns_race_for_one_chat_and_exactly_one_wins() {
    let pool = backend::pool();
    let user = new_user();
    let chat = new_chat(&mut pool.get().unwrap(), &user);

    let results = race(&backend::pool_of(32), 32, |racer, conn| {
        locks(&format!("node-{racer}")).acquire(conn, &chat, &user, &turn())
    });

    assert_eq!(results.iter().filter(|result| result.is_ok()).count(), 1);
    for result in results.into_iter().filter(Result::is_err) {
        assert_eq!(
            refused_by(result).0,
            "ConversationBusy",
            "never a database error, never a deadlock"
        );
    }
}

#[test]
fn thirty_two_turns_of_one_new_user_race_in_thirty_two_chats_and_exactly_one_wins() {
    let pool = backend::pool();
    let user = new_user(); // no settings row yet: the racers create it
    let chats: Vec<String> = (0..32)
        .map(|_| new_chat(&mut pool.get().unwrap(), &user))
        .collect();

    let results = race(&backend::pool_of(32), 32, |racer, conn| {
        let node = locks(&format!("node-{racer}"));
        (racer, node.acquire(conn, &chats[racer], &user, &turn()))
    });

    let winners: Vec<usize> = results
        .iter()
        .filter(|(_, result)| result.is_ok())
        .map(|(racer, _)| *racer)
        .collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    let mut conn = pool.get().unwrap();
    for (racer, result) in results {
        if result.is_err() {
            assert_eq!(
                refused_by(result).0,
                "TurnInFlight",
                "never a database error, never a deadlock"
            );
            assert_eq!(
                chat_lock(&mut conn, &chats[racer]),
                (None, None),
                "no chat lock without its user lock"
            );
        }
    }
}

#[test]
fn turns_and_clicks_of_one_user_never_hold_the_user_together() {
    const ROUNDS: usize = 10;
    let pool = backend::pool();
    let user = new_user();
    let chats: Vec<String> = (0..8)
        .map(|_| new_chat(&mut pool.get().unwrap(), &user))
        .collect();

    for _ in 0..ROUNDS {
        let results = race(&backend::pool_of(16), 16, |racer, conn| {
            let node = locks(&format!("node-{racer}"));
            if racer % 2 == 0 {
                let mine = turn();
                let result = node.acquire(conn, &chats[racer / 2], &user, &mine);
                (
                    HolderKind::Turn,
                    chats[racer / 2].clone(),
                    mine.as_str().to_owned(),
                    result,
                )
            } else {
                let click = ClickRef::new();
                let result = node.acquire_user(conn, &user, &click, hold());
                (
                    HolderKind::Click,
                    String::new(),
                    click.as_str().to_owned(),
                    result,
                )
            }
        });

        let winners: Vec<_> = results
            .iter()
            .filter(|(.., result)| result.is_ok())
            .collect();
        assert_eq!(
            winners.len(),
            1,
            "never both a turn and a click, nor two of either: {results:?}"
        );
        let (winner_kind, winner_chat, winner_ref) =
            (winners[0].0, winners[0].1.clone(), winners[0].2.clone());
        let expected: &str = match winner_kind {
            HolderKind::Turn => "TurnInFlight",
            HolderKind::Click => "ClickInFlight",
        };
        for (_, _, _, result) in results.into_iter().filter(|(.., result)| result.is_err()) {
            let (refusal, holder) = refused_by(result);
            assert_eq!(
                (refusal, holder.kind, holder.reference.as_str()),
                (expected, winner_kind, winner_ref.as_str()),
                "the refusal names the winner"
            );
        }
        let mut conn = pool.get().unwrap();
        // Only the winner's node may release its lock: the row names it.
        let Some((Some(winner_node), _)) = user_lock(&mut conn, &user) else {
            panic!("the winner holds the user's lock")
        };
        let node = locks(&winner_node);
        match winner_kind {
            HolderKind::Turn => assert!(node
                .release(
                    &mut *conn,
                    &winner_chat,
                    &user,
                    &TurnRef::new(&winner_ref).unwrap()
                )
                .unwrap()),
            HolderKind::Click => assert!(node
                .release_user(&mut *conn, &user, &ClickRef::parse(&winner_ref).unwrap())
                .unwrap()),
        }
    }
}

#[test]
fn sixteen_callers_of_release_stale_on_one_lost_turn_release_it_once() {
    let pool = backend::pool();
    let (user, lost) = (new_user(), turn());
    let chat = new_chat(&mut pool.get().unwrap(), &user);
    locks("node-down")
        .acquire(&mut *pool.get().unwrap(), &chat, &user, &lost)
        .unwrap();
    age_chat(&mut pool.get().unwrap(), &chat, past_the_lease());

    let results = race(&backend::pool_of(16), 16, |racer, conn| {
        locks(&format!("sweeper-{racer}")).release_stale(conn, &chat, &user, &lost)
    });

    let released = results
        .iter()
        .filter(|result| matches!(result, Ok(true)))
        .count();
    assert_eq!(released, 1, "{results:?}");
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(
        user_lock(&mut pool.get().unwrap(), &user),
        Some((None, None))
    );
}

#[test]
fn ten_thousand_turns_hold_their_locks_at_once_through_a_pool_of_four() {
    const TURNS: usize = 10_000;
    const POOL_SIZE: u32 = 4;
    let shared = backend::pool();
    let batch = unique_id("many");
    let ids: Vec<(String, String)> = (0..TURNS)
        .map(|n| (format!("{batch}-chat-{n}"), format!("{batch}-user-{n}")))
        .collect();
    {
        let mut conn = shared.get().unwrap();
        for chunk in ids.chunks(1000) {
            let chats: Vec<_> = chunk
                .iter()
                .map(|(chat, user)| (conversations::id.eq(chat), conversations::user_id.eq(user)))
                .collect();
            diesel::insert_into(conversations::table)
                .values(&chats)
                .execute(&mut *conn)
                .unwrap();
            let users: Vec<_> = chunk
                .iter()
                .map(|(_, user)| user_settings::user_id.eq(user))
                .collect();
            diesel::insert_into(user_settings::table)
                .values(&users)
                .execute(&mut *conn)
                .unwrap();
        }
    }
    let pool = backend::pool_of(POOL_SIZE);
    let turns: Vec<TurnRef> = (0..TURNS)
        .map(|n| TurnRef::new(&format!("{batch}-turn-{n}")).unwrap())
        .collect();

    std::thread::scope(|scope| {
        for worker in 0..POOL_SIZE as usize {
            let (pool, ids, turns) = (&pool, &ids, &turns);
            scope.spawn(move || {
                let node = locks(&format!("node-{worker}"));
                for n in (worker..TURNS).step_by(POOL_SIZE as usize) {
                    let mut conn = pool.get().unwrap();
                    node.acquire(&mut *conn, &ids[n].0, &ids[n].1, &turns[n])
                        .unwrap();
                }
            });
        }
    });

    // Read through another pool's connection: every lock is a committed row, none is a session
    // or a transaction of the four connections that took them.
    let mut conn = shared.get().unwrap();
    let held: i64 = conversations::table
        .filter(conversations::id.like(format!("{batch}-%")))
        .filter(conversations::busy_turn_ref.like(format!("{batch}-turn-%")))
        .count()
        .get_result(&mut *conn)
        .unwrap();
    assert_eq!(held, TURNS as i64, "every turn holds its chat at once");
    for n in (0..TURNS).step_by(97) {
        assert!(locks(&format!("node-{}", n % POOL_SIZE as usize))
            .held(&mut *conn, &ids[n].0, &ids[n].1, &turns[n])
            .unwrap());
    }
}
