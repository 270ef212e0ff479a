//! Scratch: prints the verdicts, state counts and counterexamples of one scenario.
//! `cargo run --release -p lockwright-model --example table -- native ofd crash=1 [processes] [threads]`
use lockwright_model::{check, checker::describe_path, Faults, LockKind, Scenario, Variant};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let v = Variant::from_name(&args[1]).unwrap();
    let k = LockKind::from_name(&args[2]).unwrap();
    let f = Faults::parse(&args[3]).unwrap();
    let n: u8 = args.get(4).map(|s| s.parse().unwrap()).unwrap_or(2);
    let t: u8 = args.get(5).map(|s| s.parse().unwrap()).unwrap_or(2);
    let rust = std::env::var("RUST").is_ok();
    let sc = Scenario::new(v, k).with_faults(f).with_parties(n, t);
    let r = check(&sc);
    println!(
        "{}: {} states, {} transitions, depth {}, {:?} ({:.0}/s)",
        sc.label(),
        r.unique_states,
        r.transitions,
        r.max_depth,
        r.elapsed,
        r.states_per_second()
    );
    for v in &r.verdicts {
        println!("  {} {:?}: {}", v.kind(), v.name, v.word());
        if v.expectation == stateright::Expectation::Always && !v.holds() {
            let path = v.path.as_ref().unwrap();
            if rust {
                let items: Vec<String> = path
                    .iter()
                    .map(|a| format!("{:?}", a.to_string()))
                    .collect();
                println!("      [{}]", items.join(", "));
            } else {
                for l in describe_path(&sc, path) {
                    println!("      {l}");
                }
            }
        }
    }
}
