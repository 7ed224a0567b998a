//! The destroy's performance target, on a few seeds: a simulated destroy finishes within
//! 1.1 × the lower bound (critical path, or work over the in-flight cap) plus one
//! maximum `Wait` interval, with few state transitions.

use crate::destroy_support;

use destroy_support::{random_stack, simulate, Config};
use rand::rngs::StdRng;
use rand::SeedableRng;

#[test]
fn makespan_within_1_1_of_critical_path_plus_one_wait_interval() {
    let cfg = Config::default();
    let slack_ms = (cfg.bounds.max_seconds * 1000) as f64;
    for (n, seed) in [(50usize, 1u64), (120, 2), (250, 3), (500, 4)] {
        let mut rng = StdRng::seed_from_u64(seed);
        let stack = random_stack(&mut rng, n, true, 0.05);
        let r = simulate(&stack, &cfg);
        assert!(
            r.makespan_ms as f64 <= 1.1 * r.bound_ms() as f64 + slack_ms,
            "n={n} seed={seed}: makespan {} ms vs bound {} ms",
            r.makespan_ms,
            r.bound_ms()
        );
        // Waves are driven by completions, not by a fixed interval: far fewer
        // transitions than one per second of makespan.
        assert!(
            ((r.tasks + r.waits) as u64) < r.makespan_ms / 1000 / 4,
            "n={n}: {} tasks + {} waits over {} ms",
            r.tasks,
            r.waits,
            r.makespan_ms
        );
    }
}

#[test]
fn neutral_stack_is_fully_deleted_in_dependency_order() {
    let mut rng = StdRng::seed_from_u64(9);
    let stack = random_stack(&mut rng, 80, false, 0.0);
    // simulate() asserts the order and superset invariants and a clean finish.
    let r = simulate(&stack, &Config::default());
    assert!(r.makespan_ms >= r.critical_path_ms);
}
