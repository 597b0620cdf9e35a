use safe_exec::decide::{CommandInput, decide, example_situation};
fn main() {
    let text = std::fs::read_to_string("/work/shared/corpus/tldr-common-linux.tsv").unwrap();
    let profile = safe_exec::profile::load("default").unwrap();
    let mut sit = example_situation();
    sit.confined = std::env::var("UNCONF").is_err();
    for line in text.lines().skip(1) {
        let cmd = line
            .split('\t')
            .nth(3)
            .unwrap_or("")
            .replace("{{", "")
            .replace("}}", "");
        let d = decide(
            &CommandInput::String {
                text: cmd.clone(),
                positional: vec!["sh".into()],
            },
            &profile,
            &sit,
        );
        println!("{}\t{}", d.verdict.decision.as_str(), cmd);
    }
}
