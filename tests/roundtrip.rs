//! Template round trips: every `tests/roundtrip/<family>.json` renders the standard conversations
//! with the family's real chat template, parses the final assistant turn with the family's schema
//! and requires the original message back, modulo the losses the family file states. See
//! `tests/roundtrip/README.md`.
//!
//! A test harness of its own (`harness = false`, libtest-compatible through `libtest-mimic`): the
//! family files are found when the tests run, one test per file, named `family::<name>`. Without
//! the chat templates directory they are reported as ignored (never as passed), with a warning.

mod roundtrip_support;
mod support;

use std::process::ExitCode;

use libtest_mimic::{Arguments, Failed, Trial};
use roundtrip_support as rt;

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let templates = rt::templates_dir();
    let families = rt::family_names();
    match &templates {
        Some(dir) => eprintln!(
            "template round trips: {} family files, chat templates in {}",
            families.len(),
            dir.display()
        ),
        None => eprintln!(
            "\n!!! TEMPLATE ROUND TRIPS IGNORED ({} family files): chat templates not found at {} \
             (set CHATPARSE_TEMPLATES or provide ../shared/chat_templates) !!!\n",
            families.len(),
            rt::templates_dir_wanted().display()
        ),
    }
    let nocapture = args.nocapture;
    let mut trials = vec![
        Trial::test("family_files_are_well_formed", family_files_are_well_formed),
        Trial::test("extra_families", extra_families).with_ignored_flag(true),
        Trial::test("streamed::chunkers_are_sound", || {
            rt::streamed::chunkers_are_sound().map_err(Failed::from)
        }),
        // A regression check of how a prompt's reasoning block is read.
        Trial::test("streamed::prompt_reasoning_of_an_earlier_turn", || {
            rt::streamed::prompt_reasoning_of_an_earlier_turn().map_err(Failed::from)
        }),
    ];
    for name in families {
        let streamed = name.clone();
        trials.push(
            Trial::test(format!("family::{name}"), move || {
                let summary = rt::family_test(&name)?;
                if nocapture {
                    println!("{summary}");
                }
                Ok(())
            })
            .with_ignored_flag(templates.is_none()),
        );
        trials.push(
            Trial::test(format!("streamed::{streamed}"), move || {
                let summary = rt::streamed::streamed_family_test(&streamed)?;
                if nocapture {
                    println!("{summary}");
                }
                Ok(())
            })
            .with_ignored_flag(templates.is_none()),
        );
    }
    libtest_mimic::run(&args, trials).exit_code()
}

/// Runs without the templates: every family file is well formed and names an existing schema
/// (and, with the templates, an existing template).
fn family_files_are_well_formed() -> Result<(), Failed> {
    let mut problems = Vec::new();
    let families = rt::family_names();
    if families.is_empty() {
        problems.push("no family files".to_owned());
    }
    for name in families {
        match rt::Family::load(&name) {
            Ok(family) => {
                if let Some(dir) = rt::templates_dir() {
                    if !dir.join(&family.template).is_file() {
                        problems.push(format!(
                            "{name}: template {} not found in {}",
                            family.template,
                            dir.display()
                        ));
                    }
                }
            }
            Err(errors) => {
                for e in errors {
                    problems.push(format!("{name}: {e}"));
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("tests/roundtrip/*.json:\n  {}", problems.join("\n  ")).into())
    }
}

/// A developer tool: run family files from another directory (drafts, or a family per template to
/// compare the renderer with Python), e.g.
/// `CHATPARSE_ROUNDTRIP_EXTRA=/tmp/families cargo test --test roundtrip -- --ignored extra`.
fn extra_families() -> Result<(), Failed> {
    let dir = std::env::var_os("CHATPARSE_ROUNDTRIP_EXTRA")
        .ok_or("developer tool: set CHATPARSE_ROUNDTRIP_EXTRA to a directory of family files")?;
    let dir = std::path::PathBuf::from(dir);
    let templates = rt::templates_dir().ok_or("chat templates directory not found")?;
    let mut failures = String::new();
    for name in rt::family_names_in(&dir) {
        match rt::Family::load_from(&dir.join(format!("{name}.json"))) {
            Ok(family) => {
                let report = rt::run_family(&family, &templates);
                println!("{}", report.summary());
                failures.push_str(&report.failure_text());
            }
            Err(errors) => failures.push_str(&format!("{name}: {}\n", errors.join("; "))),
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.into())
    }
}
