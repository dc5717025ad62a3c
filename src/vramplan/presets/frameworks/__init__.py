"""What each training stack does when a setting is left to it: data, one entry per framework, each
default with the file it was read in.

The case format's rule is that an empty cell means "the framework's default"; so does an option a
user leaves out. `framework_defaults(framework)` answers for every `vramplan.vocab.Framework`;
`read_framework(text)` reads a name that is not one of them as `generic`, and says so.

The package: `defaults` (`FrameworkDefaults`, one entry per stack, and the rules that pick a
default from a setup), `dates` (`has_change`, `during`), and each stack's code as it changed over
time, with the dates of the commits and releases that changed it: `transformers` (with the
remote-code families), `litgpt`, `torchtune`, `torchtitan`, `unsloth`, `megatron` (with
Transformer Engine), `deepspeed`, `peft_bnb` (peft, bitsandbytes, LLaMA-Factory).
"""
