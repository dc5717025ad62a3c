"""Messages of the sister calculators' pages (`/inference`, `/lora`), in French and English.

The numbers' labels come from `vramplan.i18n.catalogue.inference` (`infer.*`, `lora.*`),
shared with the CLI; this module holds what only the pages say.
"""

from __future__ import annotations

from vramplan.i18n import Lang

FR, EN = Lang.FR, Lang.EN

MESSAGES = {
    # --- shared by both pages -----------------------------------------------------------------
    "sister.back": {
        FR: "← Calculateur de VRAM pour l'entraînement", EN: "← VRAM calculator for training",
    },
    "sister.nav_label": {FR: "Autres calculateurs", EN: "Other calculators"},
    "sister.model": {FR: "Modèle", EN: "Model"},
    "sister.model_hint": {
        FR: "Un des {count} modèles du catalogue, par nom ou dépôt Hugging Face.",
        EN: "One of the {count} registry models, by name or Hugging Face repo.",
    },
    "sister.empty": {
        FR: "Choisissez un modèle pour afficher les résultats.",
        EN: "Choose a model to see the results.",
    },
    "sister.sources": {FR: "Sources", EN: "Sources"},
    "sister.percent": {FR: "{value}\u00a0%", EN: "{value}%"},
    "sister.how": {FR: "Comment c'est calculé", EN: "How it is computed"},
    "sister.api": {
        FR: "Les mêmes résultats en JSON : {url} (identique à {command}).",
        EN: "The same results as JSON: {url} (identical to {command}).",
    },
    # --- inference page -----------------------------------------------------------------------
    "sister.infer.title": {
        FR: "Calculateur de VRAM pour l'inférence LLM", EN: "VRAM calculator for LLM inference",
    },
    "sister.infer.description": {
        FR: "Combien de mémoire GPU (VRAM) faut-il pour faire tourner un LLM ? Poids selon le "
        "format (bf16, int8, NF4, GPTQ, AWQ, GGUF), cache KV, activations, contexte CUDA, et le "
        "plus long contexte qui tient sur votre GPU.",
        EN: "How much GPU memory (VRAM) does it take to run an LLM? Weights by format (bf16, "
        "int8, NF4, GPTQ, AWQ, GGUF), KV cache, activations, CUDA context, and the longest "
        "context that fits your GPU.",
    },
    "sister.infer.intro": {
        FR: "Pour servir un modèle, la carte doit contenir ses poids dans leur format de "
        "stockage, le cache KV de chaque séquence (il grandit avec le contexte), les "
        "activations du préremplissage et le contexte CUDA. Choisissez un modèle et un format : "
        "le total, son détail et le verdict pour vos GPU s'affichent aussitôt.",
        EN: "To serve a model, the card must hold its weights in their storage format, the KV "
        "cache of every sequence (it grows with the context), the prefill activations and the "
        "CUDA context. Choose a model and a format: the total, its breakdown and the verdict "
        "for your GPUs show at once.",
    },
    "sister.infer.group_model": {FR: "Modèle et format", EN: "Model and format"},
    "sister.infer.group_run": {FR: "Requêtes", EN: "Requests"},
    "sister.infer.group_hardware": {FR: "Matériel et moteur", EN: "Hardware and engine"},
    "sister.infer.weights": {FR: "Format des poids", EN: "Weight format"},
    "sister.infer.weights_hint": {
        FR: "bf16, fp16, fp8, int8, nf4 (bitsandbytes), gptq-4bit-g128, awq-4bit-g128 ou un "
        "type GGUF (q4_k_m, q8_0…).",
        EN: "bf16, fp16, fp8, int8, nf4 (bitsandbytes), gptq-4bit-g128, awq-4bit-g128 or a "
        "GGUF type (q4_k_m, q8_0…).",
    },
    "sister.infer.context": {FR: "Contexte", EN: "Context"},
    "sister.infer.context_unit": {FR: "jetons", EN: "tokens"},
    "sister.infer.context_hint": {
        FR: "Invite + jetons générés, par séquence.",
        EN: "Prompt + generated tokens, per sequence.",
    },
    "sister.infer.batch": {FR: "Séquences simultanées", EN: "Concurrent sequences"},
    "sister.infer.batch_hint": {
        FR: "Taille du lot : chaque séquence a son propre cache KV.",
        EN: "Batch size: every sequence has its own KV cache.",
    },
    "sister.infer.kv_dtype": {FR: "Type du cache KV", EN: "KV cache dtype"},
    "sister.infer.gpu": {FR: "GPU", EN: "GPU"},
    "sister.infer.gpu_common": {
        FR: "Cartes courantes (24, 40, 80 et 141 Gio)",
        EN: "Common cards (24, 40, 80 and 141 GiB)",
    },
    "sister.infer.engine": {FR: "Moteur", EN: "Engine"},
    "sister.infer.engine_auto": {
        FR: "Automatique (PyTorch ; llama.cpp en GGUF)",
        EN: "Automatic (PyTorch; llama.cpp for GGUF)",
    },
    "sister.infer.engine.generic": {
        FR: "PyTorch simple (cache KV statique)", EN: "Plain PyTorch (static KV cache)",
    },
    "sister.infer.engine.hf": {FR: "Hugging Face transformers", EN: "Hugging Face transformers"},
    "sister.infer.engine.litgpt": {FR: "LitGPT", EN: "LitGPT"},
    "sister.infer.engine.vllm": {
        FR: "vLLM (garde 90 % de la carte)", EN: "vLLM (keeps 90% of the card)",
    },
    "sister.infer.engine.llama.cpp": {FR: "llama.cpp (GGUF)", EN: "llama.cpp (GGUF)"},
    "sister.infer.tp": {FR: "Parallélisme de tenseurs", EN: "Tensor parallelism"},
    "sister.infer.tp_unit": {FR: "GPU", EN: "GPUs"},
    "sister.infer.tp_hint": {
        FR: "Les poids et le cache KV sont répartis sur ce nombre de GPU ; les résultats sont "
        "par GPU.",
        EN: "Weights and KV cache are split over this many GPUs; results are per GPU.",
    },
    "sister.infer.results": {FR: "Résultats", EN: "Results"},
    "sister.infer.setup": {
        FR: "{model} ({params} paramètres), poids {weights}, moteur : {engine}.",
        EN: "{model} ({params} parameters), {weights} weights, engine: {engine}.",
    },
    "sister.infer.device_total": {FR: "Total par GPU", EN: "Total per GPU"},
    "sister.infer.part.cuda_context": {FR: "contexte CUDA", EN: "CUDA context"},
    "sister.infer.chart_title": {
        FR: "Répartition de la VRAM par GPU, face à la capacité des cartes",
        EN: "VRAM per GPU by part, against the cards' capacity",
    },
    "sister.infer.chart_label": {
        FR: "Barre empilée : {parts} ; total {total} ; lignes : {lines}.",
        EN: "Stacked bar: {parts}; total {total}; lines: {lines}.",
    },
    "sister.infer.chart_line": {FR: "{gpu} ({usable} utilisables)", EN: "{gpu} ({usable} usable)"},
    "sister.infer.breakdown": {FR: "Détail par GPU", EN: "Breakdown per GPU"},
    "sister.infer.col_part": {FR: "Partie", EN: "Part"},
    "sister.infer.col_memory": {FR: "Mémoire", EN: "Memory"},
    "sister.infer.col_group": {FR: "Tenseurs", EN: "Tensors"},
    "sister.infer.col_storage": {FR: "Stockage", EN: "Storage"},
    "sister.infer.col_params": {FR: "Paramètres", EN: "Parameters"},
    "sister.infer.verdict": {FR: "Verdict", EN: "Verdict"},
    "sister.infer.fits": {
        FR: "Tient sur {gpu} : il reste {headroom} sur {usable} utilisables.",
        EN: "Fits {gpu}: {headroom} left of {usable} usable.",
    },
    "sister.infer.does_not_fit": {
        FR: "Ne tient pas sur {gpu} : il manque {missing} ({usable} utilisables).",
        EN: "Does not fit {gpu}: {missing} short ({usable} usable).",
    },
    "sister.infer.limits": {
        FR: "Contexte le plus long : {context} jetons pour {batch} séquence(s){cap}. Au plus "
        "{sequences} séquence(s) de {current} jetons.",
        EN: "Longest context: {context} tokens for {batch} sequence(s){cap}. At most "
        "{sequences} sequence(s) of {current} tokens.",
    },
    "sister.infer.no_room": {
        FR: "Pas même un jeton de contexte : les poids seuls dépassent la carte.",
        EN: "Not even one token of context: the weights alone exceed the card.",
    },
    "sister.infer.cap_note": {FR: " (le maximum du modèle)", EN: " (the model's maximum)"},
    "sister.infer.col_gpu": {FR: "GPU", EN: "GPU"},
    "sister.infer.col_fits": {FR: "Tient", EN: "Fits"},
    "sister.infer.col_headroom": {FR: "Marge", EN: "Headroom"},
    "sister.infer.explain_title": {FR: "Ce que contient la carte", EN: "What the card holds"},
    "sister.infer.explain_weights": {
        FR: "Poids : paramètres × octets du format. Les formats 4 bits stockent aussi leurs "
        "constantes de quantification (échelles par bloc ou par groupe) ; la tête de sortie, "
        "les plongements et les normes restent souvent en 16 bits.",
        EN: "Weights: parameters × the format's bytes. 4-bit formats also store their "
        "quantization constants (scales per block or group); the output head, embeddings and "
        "norms often stay in 16 bits.",
    },
    "sister.infer.explain_kv": {
        FR: "Cache KV : 2 (clés et valeurs) × couches × têtes KV × dimension de tête × octets × "
        "séquences × contexte. Les modèles GQA/MQA ont moins de têtes KV que de têtes de "
        "requête, d'où un cache bien plus petit ; les couches à fenêtre glissante ne gardent "
        "que leur fenêtre.",
        EN: "KV cache: 2 (keys and values) × layers × KV heads × head dimension × bytes × "
        "sequences × context. GQA/MQA models have fewer KV heads than query heads, hence a "
        "much smaller cache; sliding-window layers keep only their window.",
    },
    "sister.infer.explain_rest": {
        FR: "Activations et logits du morceau d'invite traité au préremplissage, tampons du "
        "moteur, puis le contexte CUDA (environ 0,5 Gio), que nvidia-smi compte mais pas "
        "PyTorch. vLLM ne s'autorise que 90 % de la carte (gpu_memory_utilization).",
        EN: "Activations and logits of the prompt chunk processed in prefill, engine buffers, "
        "then the CUDA context (about 0.5 GiB), which nvidia-smi counts and PyTorch does not. "
        "vLLM allows itself only 90% of the card (gpu_memory_utilization).",
    },
    "sister.infer.explain_inverse": {
        FR: "Le plus long contexte et le plus grand nombre de séquences sont cherchés en "
        "recalculant l'estimation entière, plafonnés par le contexte maximal du modèle.",
        EN: "The longest context and the most sequences are found by recomputing the whole "
        "estimate, capped by the model's maximum context.",
    },
    "sister.infer.sources_text": {
        FR: "Formules et sources détaillées : docs/inference.md. Formats : bitsandbytes "
        "(NF4/FP4), AutoGPTQ et AutoAWQ (groupes), ggml-common.h de llama.cpp (blocs GGUF) ; "
        "cache KV et réserve : documentation de vLLM ; architectures : config.json officiels.",
        EN: "Formulas and detailed sources: docs/inference.md. Formats: bitsandbytes (NF4/FP4), "
        "AutoGPTQ and AutoAWQ (groups), llama.cpp's ggml-common.h (GGUF blocks); KV cache and "
        "reserve: vLLM's documentation; architectures: official config.json files.",
    },
    # --- LoRA page ----------------------------------------------------------------------------
    "sister.lora.title": {
        FR: "Calculateur de paramètres LoRA", EN: "LoRA parameter calculator",
    },
    "sister.lora.description": {
        FR: "Combien de paramètres entraîne LoRA ? Le nombre exact pour un modèle, un rang et "
        "des modules cibles, sa part du modèle et la taille du fichier d'adaptateur.",
        EN: "How many parameters does LoRA train? The exact count for a model, a rank and "
        "target modules, its share of the model and the adapter file's size.",
    },
    "sister.lora.intro": {
        FR: "LoRA gèle les poids du modèle et entraîne, à côté de chaque matrice adaptée, deux "
        "petites matrices de rang r. Choisissez un modèle, un rang et les modules cibles : le "
        "nombre exact de paramètres entraînables s'affiche, avec les vraies formes du modèle.",
        EN: "LoRA freezes the model's weights and trains, beside every adapted matrix, two small "
        "matrices of rank r. Choose a model, a rank and the target modules: the exact number "
        "of trainable parameters shows, with the model's real shapes.",
    },
    "sister.lora.group_model": {FR: "Modèle de base", EN: "Base model"},
    "sister.lora.group": {FR: "Adaptateur", EN: "Adapter"},
    "sister.lora.rank": {FR: "Rang r", EN: "Rank r"},
    "sister.lora.rank_hint": {
        FR: "Un entier, souvent 8 à 64.", EN: "A whole number, often 8 to 64.",
    },
    "sister.lora.targets": {FR: "Modules cibles", EN: "Target modules"},
    "sister.lora.targets_hint": {
        FR: "« toutes » : toutes les couches linéaires des blocs (sans la tête).",
        EN: "“all”: every linear layer of the blocks (not the head).",
    },
    "sister.lora.target.q": {FR: "q (requêtes)", EN: "q (queries)"},
    "sister.lora.target.k": {FR: "k (clés)", EN: "k (keys)"},
    "sister.lora.target.v": {FR: "v (valeurs)", EN: "v (values)"},
    "sister.lora.target.o": {FR: "o (sortie de l'attention)", EN: "o (attention output)"},
    "sister.lora.target.gate": {FR: "gate (porte du MLP)", EN: "gate (MLP gate)"},
    "sister.lora.target.up": {FR: "up (MLP)", EN: "up (MLP)"},
    "sister.lora.target.down": {FR: "down (MLP)", EN: "down (MLP)"},
    "sister.lora.target.head": {FR: "head (tête de sortie)", EN: "head (output head)"},
    "sister.lora.target.all": {
        FR: "toutes (chaque couche linéaire des blocs)",
        EN: "all (every linear layer of the blocks)",
    },
    "sister.lora.variants": {FR: "Variantes", EN: "Variants"},
    "sister.lora.dora": {
        FR: "DoRA (un vecteur de magnitude par matrice)",
        EN: "DoRA (one magnitude vector per matrix)",
    },
    "sister.lora.rslora": {
        FR: "rsLoRA (échelle alpha/√r)", EN: "rsLoRA (alpha/√r scaling)",
    },
    "sister.lora.model_params": {FR: "Paramètres du modèle", EN: "Model parameters"},
    "sister.lora.of_model": {FR: "de {count} paramètres", EN: "of {count} parameters"},
    "sister.lora.matrices": {FR: "Matrices adaptées", EN: "Adapted matrices"},
    "sister.lora.files": {FR: "Fichier de l'adaptateur", EN: "Adapter file"},
    "sister.lora.col_dtype": {FR: "Type", EN: "Dtype"},
    "sister.lora.col_size": {FR: "Taille", EN: "Size"},
    "sister.lora.col_header": {FR: "dont en-tête", EN: "of which header"},
    "sister.lora.bytes": {FR: "{value} octets", EN: "{value} bytes"},
    "sister.lora.training_title": {
        FR: "Et pour l'entraînement ?", EN: "And for training?",
    },
    "sister.lora.link_text": {
        FR: "Ouvrir le calculateur d'entraînement avec ce réglage", EN:
        "Open the training calculator with this setup",
    },
    "sister.lora.explain_formula": {
        FR: "Chaque matrice adaptée W (d_sortie × d_entrée) reçoit A (r × d_entrée) et B "
        "(d_sortie × r) : r × (d_entrée + d_sortie) paramètres. Les formes sont celles du "
        "modèle : k et v sont plus étroits avec GQA, chaque expert d'un MoE compte.",
        EN: "Every adapted matrix W (d_out × d_in) gets A (r × d_in) and B (d_out × r): "
        "r × (d_in + d_out) parameters. The shapes are the model's: k and v are narrower with "
        "GQA, every expert of an MoE counts.",
    },
    "sister.lora.explain_file": {
        FR: "Le fichier adapter_model.safetensors contient ces tenseurs (en fp32 par défaut avec "
        "peft) et un en-tête JSON qui les décrit.",
        EN: "The adapter_model.safetensors file holds these tensors (in fp32 by default with "
        "peft) and a JSON header describing them.",
    },
    "sister.lora.sources_text": {
        FR: "LoRA : Hu et al. 2021 (arXiv:2106.09685) ; DoRA : Liu et al. 2024 "
        "(arXiv:2402.09353) ; rsLoRA : Kalajdzievski 2023 (arXiv:2312.03732) ; nombres vérifiés "
        "contre peft ; détails : docs/lora.md.",
        EN: "LoRA: Hu et al. 2021 (arXiv:2106.09685); DoRA: Liu et al. 2024 (arXiv:2402.09353); "
        "rsLoRA: Kalajdzievski 2023 (arXiv:2312.03732); counts checked against peft; details: "
        "docs/lora.md.",
    },
    "sister.infer.summary": {
        FR: "Mémoire par GPU : {total} ({total_gib})", EN: "Memory per GPU: {total} ({total_gib})",
    },
    "sister.lora.summary": {
        FR: "Paramètres entraînables : {count} ({share})",
        EN: "Trainable parameters: {count} ({share})",
    },
    "sister.lora.link_no_dora": {
        FR: "(Le calculateur d'entraînement compte LoRA sans DoRA.)",
        EN: "(The training calculator counts LoRA without DoRA.)",
    },
    "sister.lora.link_note": {
        FR: "Le lien ouvre le calculateur d'entraînement avec {model}, la méthode LoRA, le rang "
        "{rank} et les modules {targets} : le verdict y compte tout l'entraînement.",
        EN: "The link opens the training calculator with {model}, the LoRA method, rank {rank} "
        "and modules {targets}: its verdict counts the whole training.",
    },
}
