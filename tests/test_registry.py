"""The model registry: coverage of the issue's list, names, lookups, sources, no I/O at import."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import pytest

from vramplan.errors import UnknownName
from vramplan.i18n import Lang
from vramplan.model.hf_config import parse_config
from vramplan.presets.models import (
    MODELS,
    ModelPreset,
    architecture_of,
    find_model,
    lookup_key,
    lookup_names,
)

CASES = Path(__file__).parents[1] / "src" / "vramplan" / "data" / "cases.csv"

# The presets the issue lists, by their registry names.
ISSUE_MODELS = (
    "llama-2-7b", "llama-2-13b", "llama-2-70b", "codellama-34b", "llama-3-8b", "llama-3-70b",
    "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.2-1b", "llama-3.2-3b",
    "mistral-7b-v0.1", "mistral-7b-v0.3", "mixtral-8x7b", "mixtral-8x22b", "qwen2.5-0.5b",
    "qwen2.5-1.5b", "qwen2.5-3b", "qwen2.5-7b", "qwen2.5-14b", "qwen2.5-32b", "qwen2.5-72b",
    "gemma-2b", "gemma-7b", "gemma-2-2b", "gemma-2-9b", "gemma-2-27b", "phi-1.5", "phi-2",
    "phi-3-mini-4k", "phi-3-medium-4k", "falcon-7b", "falcon-40b", "tinyllama-1.1b",
    "stablelm-base-alpha-3b", "olmo-7b", "starcoder", "octocoder", "gpt2", "gpt2-medium",
    "gpt2-large", "gpt2-xl", "pythia-6.9b", "pythia-12b",
)


def test_the_registry_covers_the_models_asked_for() -> None:
    assert set(ISSUE_MODELS) <= {preset.name for preset in MODELS}


@pytest.mark.parametrize("preset", MODELS, ids=[preset.name for preset in MODELS])
def test_preset_is_well_formed(preset: ModelPreset) -> None:
    assert re.fullmatch(r"[a-z0-9]+(?:[.-][a-z0-9]+)*", preset.name)
    assert preset.source == f"https://huggingface.co/{preset.hf_repo}/blob/main/config.json"
    assert preset.config["model_type"] == preset.family
    assert preset.config["architectures"]
    assert architecture_of(preset) == parse_config(dict(preset.config))


def test_names_and_aliases_are_unique() -> None:
    # find_model compares names by their lookup key: two presets sharing one would make the
    # lookup depend on the registry's order.
    seen: dict[str, str] = {}
    for preset in MODELS:
        for name in lookup_names(preset):
            assert seen.setdefault(lookup_key(name), preset.name) == preset.name, name


@pytest.mark.parametrize(("written", "preset"), [
    ("llama2-7b", "llama-2-7b"),
    ("Llama 2 7B", "llama-2-7b"),  # the display name
    ("LLAMA_2_7B", "llama-2-7b"),
    ("meta-llama/Llama-2-7b-hf", "llama-2-7b"),
    ("Llama-2-7b-hf", "llama-2-7b"),
    ("gpt2_xl", "gpt2-xl"),
    ("Qwen2.5 7B", "qwen2.5-7b"),
    ("mistral7b-v0.1", "mistral-7b-v0.1"),
    ("Llama 4 Scout 17B-16E", "llama-4-scout-17b-16e"),
    ("deepseek v2 lite", "deepseek-v2-lite"),
    ("deepseek-ai/DeepSeek-V2-Lite", "deepseek-v2-lite"),
])
def test_names_are_found_whatever_their_separators(written: str, preset: str) -> None:
    assert find_model(written).name == preset


@pytest.mark.parametrize("written", ["qwen25-7b", "llama-2-7", "llama-2-7b-extra"])
def test_dots_and_words_still_count(written: str) -> None:
    with pytest.raises(UnknownName):
        find_model(written)


def test_every_model_of_the_accuracy_set_resolves() -> None:
    with CASES.open(encoding="utf-8", newline="") as rows:
        names = {row["model"] for row in csv.DictReader(rows)}
    assert names
    for name in names:
        assert find_model(name).name == name


@pytest.mark.parametrize("text", ["meta-llama/Llama-3.1-8B", "META-LLAMA/llama-3.1-8b",
                                  "Llama-3.1-8B", " llama-3.1-8b ", "meta-llama/Meta-Llama-3.1-8B"])
def test_lookup_by_repo_id_any_case(text: str) -> None:
    assert find_model(text).name == "llama-3.1-8b"


@pytest.mark.parametrize(("text", "name"), [
    ("huggyllama/llama-7b", "llama-7b"), ("llama-1-13b", "llama-13b"), ("LLaMA-33B", "llama-30b"),
    ("EleutherAI/gpt-neox-20b", "gpt-neox-20b"), ("GPT-J", "gpt-j-6b"), ("gpt-j", "gpt-j-6b"),
])
def test_older_models_by_repo_id_and_paper_name(text: str, name: str) -> None:
    assert find_model(text).name == name


@pytest.mark.parametrize(("text", "base"), [
    ("meta-llama/Llama-2-7b-chat-hf", "llama-2-7b"), ("Llama-2-13b-chat-hf", "llama-2-13b"),
    ("Meta-Llama-3-8B-Instruct", "llama-3-8b"), ("llama-3.1-8b-instruct", "llama-3.1-8b"),
    ("mistralai/Mistral-7B-Instruct-v0.1", "mistral-7b-v0.1"), ("gemma-7b-it", "gemma-7b"),
    ("meta-llama/Llama-3.2-1B-Instruct", "llama-3.2-1b"), ("llama-3.2-3b-instruct", "llama-3.2-3b"),
    ("Meta-Llama-3-70B-Instruct", "llama-3-70b"), ("Llama-3.1-70B-Instruct", "llama-3.1-70b"),
    ("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b-v0.3"),
    ("Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"), ("google/gemma-2-9b-it", "gemma-2-9b"),
    ("gemma-2-27b-it", "gemma-2-27b"), ("Qwen/Qwen2.5-32B-Instruct", "qwen2.5-32b"),
    ("meta-llama/Llama-2-70b-chat-hf", "llama-2-70b"), ("llama-2-70b-chat", "llama-2-70b"),
    ("CodeLlama-7b-Instruct-hf", "codellama-7b"), ("codellama-34b-instruct", "codellama-34b"),
    ("google/gemma-2b-it", "gemma-2b"), ("gemma-2-2b-it", "gemma-2-2b"),
    ("Qwen/Qwen2.5-3B-Instruct", "qwen2.5-3b"), ("stablelm-zephyr-3b", "stablelm-3b-4e1t"),
    ("EleutherAI/pythia-410m-deduped", "pythia-410m"), ("pythia-1.4b-deduped", "pythia-1.4b"),
    ("tiiuae/falcon-7b-instruct", "falcon-7b"), ("falcon-40b-instruct", "falcon-40b"),
    ("EleutherAI/pythia-12b-deduped", "pythia-12b"), ("Qwen/Qwen1.5-7B-Chat", "qwen1.5-7b"),
    ("qwen1.5-0.5b-chat", "qwen1.5-0.5b"), ("SmolLM-360M-Instruct", "smollm-360m"),
    ("deepseek-ai/deepseek-coder-6.7b-instruct", "deepseek-coder-6.7b"),
    ("01-ai/Yi-34B-Chat", "yi-34b"), ("yi-34b-chat", "yi-34b"),
])
def test_chat_and_instruct_variants_with_the_same_config_resolve_to_their_base(
        text: str, base: str) -> None:
    assert find_model(text).name == base


@pytest.mark.parametrize(("text", "name", "base"), [
    ("Qwen2.5-7B-Instruct", "qwen2.5-7b-instruct", "qwen2.5-7b"),
    ("Qwen/Qwen2.5-14B-Instruct", "qwen2.5-14b-instruct", "qwen2.5-14b"),
    ("qwen2.5-72b-instruct", "qwen2.5-72b-instruct", "qwen2.5-72b"),
    ("Qwen2.5-1.5B-Instruct", "qwen2.5-1.5b-instruct", "qwen2.5-1.5b"),
])
def test_instruct_variants_whose_context_differs_are_presets_of_their_own(
        text: str, name: str, base: str) -> None:
    # Their config.json says max_position_embeddings 32768, the base's 131072: the same
    # parameters, another trained context.
    preset, base_arch = find_model(text), architecture_of(find_model(base))
    assert preset.name == name
    assert architecture_of(preset).params_total == base_arch.params_total
    assert architecture_of(preset).max_position_embeddings == 32768
    assert base_arch.max_position_embeddings == 131072


@pytest.mark.parametrize(("text", "name"), [
    # another owner's copy of the same repository
    ("NousResearch/Llama-2-7b-hf", "llama-2-7b"),
    # the same weights stored in another format: the format is the case's quant
    ("unsloth/llama-3-8b-bnb-4bit", "llama-3-8b"),
    ("unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit", "llama-3.1-8b"),
    ("unsloth/gpt-oss-20b-unsloth-bnb-4bit", "gpt-oss-20b"),
    ("TheBloke/Llama-2-13B-chat-AWQ", "llama-2-13b"),
    ("TheBloke/Llama-2-7B-GPTQ", "llama-2-7b"),
    ("mistralai/Mistral-Nemo-Instruct-2407", "mistral-nemo-12b"),
])
def test_copies_and_quantized_copies_of_a_model_are_found_as_that_model(text: str,
                                                                        name: str) -> None:
    """For the case reader (offline); `find_model`, which the CLI and the API use, leaves an
    unknown repo id to the Hub, whose config.json is the copy's own."""
    from vramplan.presets.models import find_copy, find_preset

    copied = find_copy(text)
    assert copied is not None and copied.name == name
    assert find_preset(text) is None or find_preset(text) is copied


@pytest.mark.parametrize("text", ["someone/not-a-model", "unsloth/not-a-model-bnb-4bit",
                                  "meta-llama/Llama-2-7b-hf/extra"])
def test_an_unknown_repository_is_no_copy(text: str) -> None:
    from vramplan.presets.models import find_copy

    assert find_copy(text) is None


@pytest.mark.parametrize("text", ["Mixtral-8x22B-Instruct-v0.1", "CodeLlama-13b-Instruct-hf"])
def test_variants_whose_config_differs_or_was_not_read_are_not_aliases(text: str) -> None:
    # Mixtral-8x22B-Instruct-v0.1's config.json was not read (litgpt gives it a 32,768-token
    # vocabulary, the base's is 32,000); neither was CodeLlama-13b-Instruct-hf's (litgpt gives it
    # 2,048 positions, the base's file 16,384).
    with pytest.raises(UnknownName):
        find_model(text)


def test_a_base_whose_context_differs_from_the_post_trained_model_is_a_preset_of_its_own() -> None:
    # Qwen3-8B-Base's config.json says 32,768 positions, Qwen3-8B's 40,960 (litgpt builds both
    # from the post-trained model's entry): the same parameters, another trained context.
    base, post = find_model("Qwen/Qwen3-8B-Base"), find_model("Qwen/Qwen3-8B")
    assert (base.name, post.name) == ("qwen3-8b-base", "qwen3-8b")
    assert architecture_of(base).params_total == architecture_of(post).params_total
    assert architecture_of(base).max_position_embeddings == 32768
    assert architecture_of(post).max_position_embeddings == 40960


@pytest.mark.parametrize(("text", "name", "post_trained"), [
    # models_2026e.py: read from copies of the base's config.json
    ("Qwen/Qwen3-0.6B-Base", "qwen3-0.6b-base", "qwen3-0.6b"),
])
def test_qwen3_bases_read_later_have_their_post_trained_count_and_32k_positions(
        text: str, name: str, post_trained: str) -> None:
    base, post = find_model(text), find_model(post_trained)
    assert base.name == name
    assert architecture_of(base).params_total == architecture_of(post).params_total
    assert architecture_of(base).max_position_embeddings == 32768


@pytest.mark.parametrize(("text", "name", "same_count_as"), [
    # fine-tunes that keep their base's architecture (models_2026d.py): presets of their own
    ("lmsys/vicuna-13b-v1.5", "vicuna-13b-v1.5", "llama-2-13b"),
    ("zephyr-7b-alpha", "zephyr-7b-alpha", "mistral-7b-v0.1"),
    ("NousResearch/Hermes-3-Llama-3.1-8B", "hermes-3-llama-3.1-8b", "llama-3.1-8b"),
    # a release of the same organization with its base's keys: an alias of the base
    ("mosaicml/mpt-7b-chat", "mpt-7b", "mpt-7b"),
    # the same shapes, max_window_layers 21 where the base says 24 (no sliding window)
    ("Qwen/Qwen2.5-0.5B-Instruct", "qwen2.5-0.5b-instruct", "qwen2.5-0.5b"),
])
def test_fine_tunes_read_from_copies_count_as_their_base(text: str, name: str,
                                                         same_count_as: str) -> None:
    preset = find_model(text)
    assert preset.name == name
    assert architecture_of(preset).params_total == \
        architecture_of(find_model(same_count_as)).params_total


@pytest.mark.parametrize(("text", "vocab", "base"), [
    # chat tokens added to the base's vocabulary: (vocab - base vocab) x hidden x 2 (untied)
    ("teknium/OpenHermes-2.5-Mistral-7B", 32002, "mistral-7b-v0.1"),
    ("allenai/Llama-3.1-Tulu-3-8B", 128264, "llama-3.1-8b"),
    # models_2026f.py: the official file, and copies that agree with it
    ("NousResearch/Nous-Hermes-2-Mixtral-8x7B-DPO", 32002, "mixtral-8x7b"),
])
def test_fine_tunes_with_added_tokens_count_the_added_rows(text: str, vocab: int,
                                                           base: str) -> None:
    arch, base_arch = architecture_of(find_model(text)), architecture_of(find_model(base))
    assert arch.vocab_size == vocab
    added = (vocab - base_arch.vocab_size) * arch.hidden_size * 2
    assert arch.params_total == base_arch.params_total + added


def test_unknown_name_gets_three_close_names_and_a_hint_not_the_whole_list() -> None:
    with pytest.raises(UnknownName) as raised:
        find_model("llama-9")
    message = raised.value.message(Lang.EN)
    assert raised.value.choices == ("llama-7b", "llama-13b", "llama-30b")
    assert "'llama-9'" in message and "close names: llama-7b, llama-13b, llama-30b" in message
    assert "repo id (org/name) or a config.json" in message
    assert "tinyllama-1.1b" not in message


@pytest.mark.parametrize(("text", "first"), [
    ("qwen2.5-7b-chat", "qwen2.5-7b"), ("gemma3-4b-pt", "gemma-3-4b"),
    ("deepseek v3 base", "deepseek-v3"),
    ("meta-llama/Llama-3.2-1B-Chat", "llama-3.2-1b"), ("mistral-nemo-13b", "mistral-nemo-12b"),
])
def test_the_closest_name_comes_first(text: str, first: str) -> None:
    with pytest.raises(UnknownName) as raised:
        find_model(text)
    assert raised.value.choices[0] == first


def test_a_name_close_to_nothing_gets_the_hint_alone() -> None:
    with pytest.raises(UnknownName) as raised:
        find_model("xyzzy")
    assert raised.value.choices == ()
    assert raised.value.message(Lang.EN) == (
        "model: 'xyzzy' is neither a known model (`vramplan models`) nor a Hugging Face repo id; "
        "give a repo id (org/name) or a config.json")


def test_importing_the_registry_opens_no_file() -> None:
    probe = (
        "import sys\n"
        "import vramplan.model.architecture, vramplan.errors, vramplan.i18n\n"
        "opened = []\n"
        "sys.addaudithook(lambda event, args: opened.append(args[0])"
        " if event == 'open' else None)\n"
        "import vramplan.presets.models\n"
        "print([path for path in opened if not str(path).endswith(('.py', '.pyc'))])\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_docs_list_every_preset_with_its_count() -> None:
    docs = (Path(__file__).parents[1] / "docs" / "models.md").read_text(encoding="utf-8")
    for preset in MODELS:
        row = f"| `{preset.name}` | {preset.family} | {architecture_of(preset).params_total:,} |"
        assert row in docs, preset.name


# The Pythia model card's "Non-Embedding Params" (EleutherAI/pythia-410m-v0's card, the same
# table in every Pythia card): the blocks and the final norm, without the embedding and the
# untied `embed_out`.
@pytest.mark.parametrize(("name", "non_embedding"), [
    ("pythia-70m", 18_915_328), ("pythia-160m", 85_056_000), ("pythia-410m", 302_311_424),
    ("pythia-1b", 805_736_448), ("pythia-1.4b", 1_208_602_624), ("pythia-2.8b", 2_517_652_480),
])
def test_pythia_counts_without_embeddings_are_the_model_cards(
        name: str, non_embedding: int) -> None:
    arch = architecture_of(find_model(name))
    assert arch.params_non_embedding == non_embedding
    assert arch.params_total == non_embedding + 2 * arch.vocab_size * arch.hidden_size


def test_qwen15_7b_count_is_its_checkpoint_size() -> None:
    # Qwen1.5-7B's model.safetensors.index.json: total_size 15,442,649,088 bytes of bfloat16
    # (huggingface/transformers examples/pytorch/torchacc/qwen/Qwen1.5-7B @f092c38c, a fork's
    # commit in the stored history)
    assert architecture_of(find_model("Qwen/Qwen1.5-7B")).params_total * 2 == 15_442_649_088


def test_deepseek_v2_lite_total_is_the_papers() -> None:
    # DeepSeek-AI 2024, arXiv:2405.04434, appendix B.1: "DeepSeek-V2-Lite comprises 15.7B total
    # parameters, of which 2.4B are activated for each token" (a copy of the appendix in the
    # code-search index, file id 62242717807). The activated count is not compared:
    # `params_active` gives 2.66B with the token embedding, 2.45B without it.
    assert round(architecture_of(find_model("deepseek-v2-lite")).params_total / 10**8) == 157


def test_presets_are_hashable_and_read_only() -> None:
    assert len(set(MODELS)) == len(MODELS)
    with pytest.raises(TypeError):
        MODELS[0].config["hidden_size"] = 1  # type: ignore[index]
