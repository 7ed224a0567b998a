//! Cost of what every `destroy-wave` invocation recomputes: the delete graph of the
//! remaining records and the ready set, for stacks of 100 and 500 records.

#[path = "../tests/it/destroy_support/mod.rs"]
mod destroy_support;

use cdkd_core::destroy::graph::DeleteGraph;
use cdkd_core::destroy::waves::ready_set;
use criterion::{criterion_group, criterion_main, Criterion};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::collections::{BTreeMap, BTreeSet};

fn bench(c: &mut Criterion) {
    for n in [100usize, 500] {
        let mut rng = StdRng::seed_from_u64(n as u64);
        let stack = destroy_support::random_stack(&mut rng, n, true, 0.05);
        c.bench_function(&format!("destroy_graph_build_{n}"), |b| {
            b.iter(|| DeleteGraph::build(&stack.resources).unwrap())
        });
        let graph = DeleteGraph::build(&stack.resources).unwrap();
        let outcomes = BTreeMap::new();
        let flying = BTreeSet::new();
        c.bench_function(&format!("destroy_ready_set_{n}"), |b| {
            b.iter(|| ready_set(&graph, &outcomes, &flying))
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
