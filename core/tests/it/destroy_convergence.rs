//! Crash safety (docs/destroy.md, "Crash safety: state written as it goes"): repeated application of the wave logic, with
//! records removed from state only after a confirmed delete, converges under random
//! crashes (an invocation dying before any I/O operation), injected delete failures and
//! stop requests: nothing is deleted twice or out of order, nothing is left behind, and
//! state.json never lists a resource that is gone without also keeping every one that
//! exists.

use crate::destroy_support;

use cdkd_core::destroy::model::Progress;
use destroy_support::{finish, random_stack, wave, Config, FakeAws, Io, Store};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;

#[derive(Default)]
struct Stats {
    crashes: u32,
    runs: u32,
    resent: u32,
    failed_requests: u32,
}

struct Scenario {
    n: usize,
    typed: bool,
    fail_p: f64,
    crash_span: u64,
    max_crashes: u32,
    stop_p: f64,
}

fn run_scenario(seed: u64, sc: &Scenario) -> Stats {
    run_with(seed, sc, false).expect("invariants hold")
}

/// Runs one scenario; `Err` carries the invariant violations found.
fn run_with(seed: u64, sc: &Scenario, buggy: bool) -> Result<Stats, Vec<String>> {
    let mut stats = Stats::default();
    let mut rng = StdRng::seed_from_u64(seed);
    let stack = random_stack(&mut rng, sc.n, sc.typed, 0.15);
    let mut aws = FakeAws::new(&stack);
    let mut injected = std::collections::HashMap::new();
    for id in stack.resources.keys() {
        if rng.gen_bool(sc.fail_p) {
            let k = rng.gen_range(1..=2);
            aws.fail_plan.insert(id.clone(), k);
            injected.insert(id.clone(), k);
        }
    }
    let cfg = Config {
        max_in_flight: rng.gen_range(1..=8),
        buggy_remove_on_send: buggy,
        ..Config::default()
    };
    let mut store = Store {
        state: Some(stack.resources.clone()),
        progress: Progress::default(),
        state_writes: 0,
    };
    let mut io = Io {
        ops: 0,
        crash_at: Some(rng.gen_range(1..=sc.crash_span)),
    };
    let mut crashes_left = sc.max_crashes;
    let mut reschedule = |io: &mut Io, rng: &mut StdRng, stats: &mut Stats| {
        stats.crashes += 1;
        if crashes_left > 0 {
            crashes_left -= 1;
            io.crash_at = Some(io.ops + rng.gen_range(1..=sc.crash_span));
        }
    };
    // A run ends unfinished only on a stop request (runs 1 to 3) or a failed delete,
    // which spends one injected failure; a crash only repeats the step it killed. So
    // every run past these makes progress, and more runs than that is no convergence.
    let max_runs = 1 + 3 + injected.values().sum::<u32>();
    let mut violations = Vec::new();
    let mut t = 0u64;
    let mut runs = 0;
    'runs: loop {
        runs += 1;
        stats.runs += 1;
        if buggy && !violations.is_empty() {
            return Err(violations);
        }
        assert!(
            runs <= max_runs,
            "seed {seed}: no convergence after {runs} runs (at most {max_runs}: 3 stops and {} injected failures)",
            max_runs - 4
        );
        store.progress = Progress {
            run_id: format!("run-{runs}").into(),
            stack: "Prop".into(),
            region: "us-east-1".into(),
            ..Default::default()
        };
        let stop_at = (runs <= 3 && rng.gen_bool(sc.stop_p)).then(|| rng.gen_range(1..5u32));
        let mut waves = 0u32;
        loop {
            waves += 1;
            assert!(waves < 20_000, "seed {seed}: wave loop does not end");
            if Some(waves) == stop_at {
                store.progress.stop_requested = true;
            }
            match wave(&mut store, &mut aws, &mut io, &cfg, t, &mut violations) {
                Err(_) => {
                    t += 1000;
                    reschedule(&mut io, &mut rng, &mut stats);
                }
                Ok(exit) => {
                    t = exit.now + exit.wait_seconds * 1000;
                    if exit.finished {
                        break;
                    }
                }
            }
        }
        loop {
            match finish(&mut store, &aws, &mut io, &mut violations) {
                Err(_) => reschedule(&mut io, &mut rng, &mut stats),
                Ok(true) => break 'runs,
                Ok(false) => break,
            }
        }
    }
    if !violations.is_empty() {
        return Err(violations);
    }
    assert!(
        aws.violations.is_empty(),
        "seed {seed}: {:?}",
        aws.violations
    );
    assert!(store.state.is_none(), "seed {seed}: state left behind");
    let retained: BTreeSet<String> = stack.retain.clone();
    assert_eq!(
        aws.live, retained,
        "seed {seed}: only retained resources may live on"
    );
    for (id, n) in &aws.effective {
        assert_eq!(*n, 1, "seed {seed}: {id} deleted {n} times");
    }
    for (id, n) in &aws.accepted {
        let allowed = 1 + injected.get(id).copied().unwrap_or(0);
        assert!(
            *n <= allowed,
            "seed {seed}: {id} got {n} delete requests (allowed {allowed})"
        );
    }
    stats.resent = aws.resent;
    stats.failed_requests = injected.values().sum();
    Ok(stats)
}

#[test]
fn crash_safety_converges_over_100_seeds() {
    let mut total = Stats::default();
    for seed in 0..100 {
        let s = run_scenario(
            seed,
            &Scenario {
                n: 5 + (seed as usize * 7) % 40,
                typed: seed % 2 == 0,
                fail_p: 0.1,
                crash_span: 12,
                max_crashes: 15,
                stop_p: 0.2,
            },
        );
        total.crashes += s.crashes;
        total.runs += s.runs;
        total.resent += s.resent;
        total.failed_requests += s.failed_requests;
    }
    eprintln!(
        "100 seeds: {} runs, {} crashes, {} re-sent intents, {} injected failures",
        total.runs, total.crashes, total.resent, total.failed_requests
    );
    // The faults really happened: crashes, re-sent intents, failures needing re-runs.
    assert!(total.crashes >= 500, "crashes {}", total.crashes);
    assert!(total.resent >= 50, "resent {}", total.resent);
    assert!(
        total.failed_requests >= 50,
        "failures {}",
        total.failed_requests
    );
    assert!(total.runs >= 150, "runs {}", total.runs);
}

#[test]
fn invariant_checker_catches_a_record_dropped_before_its_delete_is_confirmed() {
    let sc = Scenario {
        n: 12,
        typed: false,
        fail_p: 0.0,
        crash_span: 10,
        max_crashes: 0,
        stop_p: 0.0,
    };
    let caught = (0..10)
        .filter(|&seed| run_with(seed, &sc, true).is_err())
        .count();
    assert!(
        caught >= 5,
        "the superset check caught only {caught} of 10 buggy runs"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn crash_safety_converges_for_random_graphs_and_fault_points(
        seed in any::<u64>(),
        n in 1usize..45,
        typed in any::<bool>(),
        fail_p in 0.0f64..0.3,
        crash_span in 2u64..30,
        max_crashes in 0u32..25,
        stop_p in 0.0f64..0.5,
    ) {
        run_scenario(seed, &Scenario { n, typed, fail_p, crash_span, max_crashes, stop_p });
    }
}
