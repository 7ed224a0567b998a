//! `make bench-destroy`: simulated destroys over random stacks of 50–500 records with
//! per-type delete latencies, driven by cdkd-core's wave logic exactly as the
//! `destroy-wave` step drives it. Prints, per run, the makespan against the lower bound
//! (critical path, or total work over the in-flight cap) and the Step Functions state
//! transitions (Task + Wait states).
//!
//! Run: `cargo run -p cdkd-core --example destroy_sim [-- --seeds N]`.

#[path = "../tests/it/destroy_support/mod.rs"]
mod destroy_support;

use destroy_support::{random_stack, simulate, Config};
use rand::rngs::StdRng;
use rand::SeedableRng;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seeds: u64 = args
        .iter()
        .position(|a| a == "--seeds")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let cfg = Config::default();
    let slack_ms = cfg.bounds.max_seconds * 1000;
    println!(
        "config: max in flight {}, inline wait <= {} ms, Wait {}..{} s, invocation {} ms, call {} ms",
        cfg.max_in_flight,
        cfg.inline_max_ms,
        cfg.bounds.min_seconds,
        cfg.bounds.max_seconds,
        cfg.invocation_ms,
        cfg.call_ms
    );
    println!(
        "{:>5} {:>5} {:>10} {:>10} {:>10} {:>7} {:>6} {:>6} {:>7}  target",
        "n", "seed", "bound_s", "cp_s", "makespan_s", "ratio", "tasks", "waits", "trans"
    );
    let mut worst: f64 = 0.0;
    let mut all_ok = true;
    let mut total_trans = 0u64;
    let mut total_lambda = 0u64;
    let mut runs = 0u64;
    for n in [50usize, 100, 200, 300, 500] {
        for seed in 0..seeds {
            let mut rng = StdRng::seed_from_u64(seed * 1000 + n as u64);
            let stack = random_stack(&mut rng, n, true, 0.05);
            let r = simulate(&stack, &cfg);
            let ok = r.makespan_ms as f64 <= 1.1 * r.bound_ms() as f64 + slack_ms as f64;
            all_ok &= ok;
            worst = worst.max(r.ratio());
            let trans = r.tasks + r.waits;
            total_trans += trans as u64;
            total_lambda += r.lambda_ms;
            runs += 1;
            println!(
                "{:>5} {:>5} {:>10.1} {:>10.1} {:>10.1} {:>7.3} {:>6} {:>6} {:>7}  {}",
                r.records,
                seed,
                r.bound_ms() as f64 / 1000.0,
                r.critical_path_ms as f64 / 1000.0,
                r.makespan_ms as f64 / 1000.0,
                r.ratio(),
                r.tasks,
                r.waits,
                trans,
                if ok { "ok" } else { "MISSED" }
            );
        }
    }
    println!(
        "worst makespan/bound {:.3}; mean transitions (Task+Wait) per run {:.1}; mean Lambda time per run {:.0} s; target makespan <= 1.1 x bound + {} s: {}",
        worst,
        total_trans as f64 / runs as f64,
        total_lambda as f64 / 1000.0 / runs as f64,
        slack_ms / 1000,
        if all_ok { "met" } else { "MISSED" }
    );

    // The trade-off of inline waits and of the in-flight cap, summarised.
    for (label, alt) in [
        (
            "no inline waits (every wait is a Wait state)",
            Config {
                inline_max_ms: 0,
                ..cfg
            },
        ),
        (
            "in-flight cap 10",
            Config {
                max_in_flight: 10,
                ..cfg
            },
        ),
    ] {
        let (mut worst, mut trans, mut n_runs, mut lambda) = (0f64, 0u64, 0u64, 0u64);
        for n in [50usize, 100, 200, 300, 500] {
            for seed in 0..seeds {
                let mut rng = StdRng::seed_from_u64(seed * 1000 + n as u64);
                let r = simulate(&random_stack(&mut rng, n, true, 0.05), &alt);
                worst = worst.max(r.ratio());
                trans += (r.tasks + r.waits) as u64;
                lambda += r.lambda_ms;
                n_runs += 1;
            }
        }
        println!(
            "{label}: worst makespan/bound {:.3}, mean transitions (Task+Wait) per run {:.1}, mean Lambda time per run {:.0} s",
            worst,
            trans as f64 / n_runs as f64,
            lambda as f64 / 1000.0 / n_runs as f64
        );
    }
}
