"""Messages of the page's "Activations" estimate and "Will it fit?" section, in French and
English. The verdict, limits and change tables reuse `vramplan fit`'s messages (locales/fit.py)."""

from __future__ import annotations

from vramplan.i18n import Lang

FR, EN = Lang.FR, Lang.EN

MESSAGES = {
    # --- Activations group: batch, sequence length, method, and the estimate ------------------
    "web_fit.batch": {FR: "Micro-lot (séquences)", EN: "Micro-batch (sequences)"},
    "web_fit.seq_len": {FR: "Longueur de séquence (jetons)", EN: "Sequence length (tokens)"},
    "web_fit.method": {FR: "Méthode d'entraînement", EN: "Training method"},
    "web_fit.method.full": {FR: "Tous les poids (full)", EN: "All weights (full)"},
    "web_fit.method.freeze": {FR: "Couches gelées (freeze)", EN: "Frozen layers (freeze)"},
    "web_fit.method.lora": {FR: "LoRA", EN: "LoRA"},
    "web_fit.method.qlora": {FR: "QLoRA (base 4 bits)", EN: "QLoRA (4-bit base)"},
    "web_fit.act_title": {
        FR: "Estimer à partir du lot et de la longueur de séquence",
        EN: "Estimate from batch and sequence length",
    },
    "web_fit.act_value": {FR: "A estimée : {value}", EN: "Estimated A: {value}"},
    "web_fit.act_setup": {
        FR: "{model}, lot {batch} × {seq_len} jetons, {method} ; précision mixte, attention "
        "SDPA, sans checkpointing, comme transformers l'exécute (modèle détaillé, "
        "docs/memory-model.md).",
        EN: "{model}, batch {batch} × {seq_len} tokens, {method}; mixed precision, SDPA "
        "attention, no checkpointing, as transformers runs it (detailed model, "
        "docs/memory-model.md).",
    },
    "web_fit.act_use": {FR: "Utiliser {value} Go comme A", EN: "Use {value} GB as A"},
    "web_fit.act_semantics": {
        FR: "Le calcul simple reste V = M + A : le bouton copie cette estimation dans « Mémoire "
        "d'activations », que vous pouvez ensuite modifier.",
        EN: "The simple rule stays V = M + A: the button copies this estimate into \"Activation "
        "memory\", which you can still edit.",
    },
    "web_fit.act_needs_model": {
        FR: "Choisissez un modèle pré-défini pour estimer A à partir du lot et de la longueur "
        "de séquence.",
        EN: "Pick a preset model to estimate A from the batch and the sequence length.",
    },
    # --- Will it fit? inputs ------------------------------------------------------------------
    "web_fit.title": {FR: "Est-ce que ça tient ?", EN: "Will it fit?"},
    "web_fit.intro": {
        FR: "Pour le modèle choisi, la méthode, le lot et la séquence des « Données » : la "
        "mémoire par GPU au pic (modèle détaillé, activations comprises), le verdict avec une "
        "marge de sécurité, ce qui tient au plus, et quoi changer pour tenir.",
        EN: "For the chosen model, method, batch and sequence from \"Inputs\": the memory per "
        "GPU at the peak (detailed model, activations included), the verdict with a safety "
        "margin, the most that fits, and what to change to fit.",
    },
    "web_fit.group": {FR: "GPU et entraînement", EN: "GPUs and training"},
    "web_fit.gpu": {FR: "Type de GPU", EN: "GPU type"},
    "web_fit.gpus": {FR: "Nombre de GPU", EN: "Number of GPUs"},
    "web_fit.gpus_hint": {FR: "Entier, 1 ou plus.", EN: "A whole number, 1 or more."},
    "web_fit.sharding": {FR: "Partage entre GPU", EN: "Sharding across GPUs"},
    "web_fit.auto": {
        FR: "automatique (none sur 1 GPU, ddp au-delà)",
        EN: "automatic (none on 1 GPU, ddp beyond)",
    },
    "web_fit.offload": {FR: "Déchargement vers le CPU", EN: "CPU offload"},
    "web_fit.precision": {FR: "Précision", EN: "Precision"},
    "web_fit.checkpointing": {FR: "Checkpointing des activations",
                              EN: "Activation checkpointing"},
    "web_fit.margin": {FR: "Part utilisable de la mémoire (%)", EN: "Usable share of memory (%)"},
    "web_fit.margin_hint": {
        FR: "80 % par défaut (Fujii et al. 2024) ; 100 = sans marge.",
        EN: "80% by default (Fujii et al. 2024); 100 = no margin.",
    },
    # --- Will it fit? results ------------------------------------------------------------------
    "web_fit.needs_model": {
        FR: "Choisissez un modèle pré-défini dans « Données » pour savoir s'il tient.",
        EN: "Pick a preset model in \"Inputs\" to see whether it fits.",
    },
    "web_fit.title_line": {
        FR: "{model} sur {gpus} × {gpu}, {sharding}",
        EN: "{model} on {gpus} × {gpu}, {sharding}",
    },
    "web_fit.custom_optimizer": {
        FR: "(Mémoire par paramètre personnalisée : l'estimation détaillée suppose AdamW.)",
        EN: "(Custom memory per parameter: the detailed estimate assumes AdamW.)",
    },
    "web_fit.margin_line": {
        FR: "Marge de sécurité : on vise au plus {share} % de la mémoire du GPU (réglable "
        "ci-dessus).",
        EN: "Safety margin: plan for at most {share}% of the GPU's memory (adjustable above).",
    },
    "web_fit.chart_title": {
        FR: "Mémoire par GPU : {total} au pic, {usable} utilisables sur {capacity}",
        EN: "Memory per GPU: {total} at the peak, {usable} usable of {capacity}",
    },
    "web_fit.line_usable": {FR: "utilisable {value}", EN: "usable {value}"},
    "web_fit.line_capacity": {FR: "capacité {value}", EN: "capacity {value}"},
    "web_fit.limits": {FR: "Ce qui tient au plus", EN: "The most that fits"},
    "web_fit.changes_title": {FR: "Quoi changer pour tenir", EN: "What to change to fit"},
    "web_fit.combined_title": {FR: "Changements combinés", EN: "Changes combined"},
    "web_fit.col_source": {FR: "source", EN: "source"},
    "web_fit.json_link": {FR: "Ce résultat en JSON", EN: "This result as JSON"},
}
