"""Messages of `vramplan fit`: sharding, verdicts with a margin, inverse solving, changes."""

from __future__ import annotations

from vramplan.i18n import Lang

FR, EN = Lang.FR, Lang.EN

MESSAGES = {
    # --- help ------------------------------------------------------------------------------------
    "help.fit": {
        FR: "Est-ce que ça tient ? Mémoire par GPU d'un entraînement sur N GPU (DDP, ZeRO, FSDP, "
        "déchargement), marge de sécurité, plus grand lot, moins de GPU, et quoi changer.",
        EN: "Will it fit? Per-GPU memory of a training run on N GPUs (DDP, ZeRO, FSDP, offload), "
        "with a safety margin, the largest batch, the fewest GPUs, and what to change.",
    },
    "help.fit_examples": {
        FR: "exemples :\n"
        "  vramplan fit --model llama-2-7b --gpu a100-80gb --batch 4 --seq-len 2048\n"
        "  vramplan fit --model llama-2-13b --method lora --gpu a100-40gb --gpus 4 "
        "--sharding fsdp --framework litgpt --checkpointing full --json",
        EN: "examples:\n"
        "  vramplan fit --model llama-2-7b --gpu a100-80gb --batch 4 --seq-len 2048\n"
        "  vramplan fit --model llama-2-13b --method lora --gpu a100-40gb --gpus 4 "
        "--sharding fsdp --framework litgpt --checkpointing full --json",
    },
    "help.fit_gpu": {FR: "type de GPU (voir `vramplan gpus`)",
                     EN: "GPU type (see `vramplan gpus`)"},
    "help.fit_gpus": {FR: "nombre de GPU (défaut 1)", EN: "number of GPUs (default 1)"},
    "help.fit_gpus_per_node": {
        FR: "GPU par nœud (HSDP, mémoire hôte ; défaut 8)",
        EN: "GPUs per node (HSDP, host memory; default 8)",
    },
    "help.fit_sharding": {
        FR: "partage entre GPU : none, ddp, zero1, zero2, zero3, fsdp, fsdp-grad-op, hsdp "
        "(défaut : none sur 1 GPU, ddp au-delà)",
        EN: "how GPUs share the states: none, ddp, zero1, zero2, zero3, fsdp, fsdp-grad-op, hsdp "
        "(default: none on 1 GPU, ddp above)",
    },
    "help.fit_offload": {
        FR: "déchargement vers la mémoire hôte : none, optimizer, params-optimizer, activations",
        EN: "offload to host memory: none, optimizer, params-optimizer, activations",
    },
    "help.fit_margin": {
        FR: "part utilisable de la mémoire du GPU, en pourcentage (défaut 80, Fujii et al. 2024 ; "
        "100 = sans marge)",
        EN: "usable share of the GPU's memory, in percent (default 80, Fujii et al. 2024; "
        "100 = no margin)",
    },
    "help.fit_tp": {
        FR: "parallélisme de tenseur Megatron-LM (défaut 1 ; avec parallélisme de séquence)",
        EN: "Megatron-LM tensor parallelism (default 1; with sequence parallelism)",
    },
    "help.fit_pp": {
        FR: "étages de pipeline Megatron-LM, ordonnancement 1F1B (défaut 1)",
        EN: "Megatron-LM pipeline stages, 1F1B schedule (default 1)",
    },
    "help.fit_grad_accum": {
        FR: "pas d'accumulation de gradients (défaut : 1, litgpt accumule toujours)",
        EN: "gradient accumulation steps (default: 1; litgpt always accumulates)",
    },
    "help.fit_training": {
        FR: "réglages d'entraînement, mêmes valeurs que le format des cas mesurés",
        EN: "training settings, same values as the measured-case format",
    },
    "help.fit_opt.method": {FR: "full, freeze, lora, qlora (défaut full)",
                             EN: "full, freeze, lora, qlora (default full)"},
    "help.fit_opt.precision": {FR: "mixed, amp, bf16-true, fp32 (défaut bf16-true)",
                             EN: "mixed, amp, bf16-true, fp32 (default bf16-true)"},
    "help.fit_opt.optimizer": {
        FR: "adamw, adamw-8bit, paged-adamw, paged-adamw-8bit, sgd-momentum, sgd, adafactor "
        "(défaut adamw)",
        EN: "adamw, adamw-8bit, paged-adamw, paged-adamw-8bit, sgd-momentum, sgd, adafactor "
        "(default adamw)"},
    "help.fit_opt.optimizer_impl": {FR: "foreach, fused, for-loop, in-backward (défaut foreach)",
                             EN: "foreach, fused, for-loop, in-backward (default foreach)"},
    "help.fit_opt.quant": {FR: "none, nf4, nf4-dq, fp4, fp4-dq, int8 (défaut none)",
                             EN: "none, nf4, nf4-dq, fp4, fp4-dq, int8 (default none)"},
    "help.fit_opt.lora_r": {FR: "8, 16, 64… (défaut 8)",
                             EN: "8, 16, 64… (default 8)"},
    "help.fit_opt.lora_targets": {FR: "q,k,v,o,gate,up,down,head, all (défaut q,v)",
                             EN: "q,k,v,o,gate,up,down,head, all (default q,v)"},
    "help.fit_opt.batch": {FR: "1, 2, 4… (défaut 1)",
                             EN: "1, 2, 4… (default 1)"},
    "help.fit_opt.seq_len": {FR: "512, 2048… (défaut 2048)",
                             EN: "512, 2048… (default 2048)"},
    "help.fit_opt.checkpointing": {FR: "none, full, selective (défaut none)",
                             EN: "none, full, selective (default none)"},
    "help.fit_opt.attention": {FR: "eager, sdpa, flash (défaut sdpa)",
                             EN: "eager, sdpa, flash (default sdpa)"},
    "help.fit_opt.loss": {FR: "standard, chunked (défaut celui du cadre)",
                             EN: "standard, chunked (default: the framework's)"},
    "help.fit_opt.framework": {
        FR: "hf, litgpt, torchtune, deepspeed, megatron, generic (défaut hf)",
        EN: "hf, litgpt, torchtune, deepspeed, megatron, generic (default hf)"},
    "help.fit_opt.metric": {FR: "allocated, reserved, device (défaut device)",
                             EN: "allocated, reserved, device (default device)"},
    # --- errors ----------------------------------------------------------------------------------
    # --- report ----------------------------------------------------------------------------------
    "fit.title": {
        FR: "Est-ce que ça tient ? {model} sur {gpus} × {gpu}, {sharding}",
        EN: "Will it fit? {model} on {gpus} × {gpu}, {sharding}",
    },
    "fit.setup": {
        FR: "{method}, {precision}, {optimizer}, lot {batch} × {seq_len} jetons, "
        "checkpointing {checkpointing}, attention {attention}, cadre {framework}",
        EN: "{method}, {precision}, {optimizer}, batch {batch} × {seq_len} tokens, "
        "checkpointing {checkpointing}, attention {attention}, framework {framework}",
    },
    "fit.per_gpu": {
        FR: "Mémoire par GPU au pic (phase {phase}, mesure {metric}) :",
        EN: "Memory per GPU at the peak (phase {phase}, metric {metric}):",
    },
    "fit.total": {FR: "total par GPU", EN: "total per GPU"},
    "fit.allocator": {
        FR: "allocateur et contexte CUDA", EN: "allocator and CUDA context",
    },
    "fit.host": {
        FR: "Mémoire hôte par nœud pour le déchargement : {host} (dont épinglée : {pinned})",
        EN: "Host memory per node for offload: {host} (pinned: {pinned})",
    },
    "fit.fits": {
        FR: "Ça tient : {peak} sur {usable} utilisables ({share} % de {capacity}).",
        EN: "It fits: {peak} of {usable} usable ({share}% of {capacity}).",
    },
    "fit.fits_tight": {
        FR: "Ça tient de justesse, au-delà de la marge : {peak} pour {usable} utilisables "
        "({share} % de {capacity}) ; risque de manque de mémoire.",
        EN: "It fits only beyond the margin: {peak} for {usable} usable ({share}% of "
        "{capacity}); it may run out of memory.",
    },
    "fit.does_not_fit": {
        FR: "Ça ne tient pas : {peak} pour {usable} utilisables ({share} % de {capacity}).",
        EN: "It does not fit: {peak} for {usable} usable ({share}% of {capacity}).",
    },
    "fit.margin_source": {
        FR: "Marge : sous 80 % de la mémoire estimée, aucun manque de mémoire sur 454 "
        "entraînements (Fujii et al. 2024, arXiv:2411.06465).",
        EN: "Margin: below 80% of memory as estimated, no out-of-memory error in 454 training "
        "runs (Fujii et al. 2024, arXiv:2411.06465).",
    },
    "fit.max_batch": {FR: "Plus grand micro-lot qui tient : {value}",
                      EN: "Largest micro-batch that fits: {value}"},
    "fit.max_seq_len": {FR: "Plus longue séquence qui tient : {value}",
                        EN: "Longest sequence that fits: {value}"},
    "fit.none_fits": {FR: "aucun", EN: "none"},
    "fit.fewest_gpus": {
        FR: "Le moins de GPU {gpu} par schéma (même réglage d'entraînement) :",
        EN: "Fewest {gpu} GPUs per scheme (same training settings):",
    },
    "fit.col_sharding": {FR: "partage", EN: "sharding"},
    "fit.col_offload": {FR: "déchargement", EN: "offload"},
    "fit.col_gpus": {FR: "GPU", EN: "GPUs"},
    "fit.col_peak": {FR: "pic par GPU", EN: "peak per GPU"},
    "fit.more_than": {FR: "> {n}", EN: "> {n}"},
    "fit.cheapest": {
        FR: "Combinaison la moins coûteuse : {gpus} × {gpu}, {sharding}, déchargement {offload}.",
        EN: "Cheapest combination: {gpus} × {gpu}, {sharding}, offload {offload}.",
    },
    "fit.no_cheapest": {
        FR: "Aucun nombre de ces GPU ne suffit sans changer le réglage d'entraînement.",
        EN: "No number of these GPUs is enough without changing the training settings.",
    },
    "fit.changes": {
        FR: "Quoi changer (classé : ce qui fait tenir, puis le moins coûteux en qualité, en "
        "vitesse, puis le plus économe) :",
        EN: "What to change (ranked: what makes it fit, then least cost in quality, in speed, "
        "then most memory saved):",
    },
    "fit.no_changes": {FR: "Aucun changement ne réduit la mémoire.",
                       EN: "No change reduces the memory."},
    "fit.col_change": {FR: "changement", EN: "change"},
    "fit.col_detail": {FR: "réglage", EN: "setting"},
    "fit.col_new_peak": {FR: "nouveau pic", EN: "new peak"},
    "fit.col_saved": {FR: "économie", EN: "saved"},
    "fit.col_fits": {FR: "tient", EN: "fits"},
    "fit.col_speed": {FR: "vitesse", EN: "speed"},
    "fit.col_quality": {FR: "qualité", EN: "quality"},
    "fit.combined": {
        FR: "Changements combinés, appliqués l'un après l'autre :",
        EN: "Changes combined, applied one after the other:",
    },
    "fit.sources": {FR: "Sources des coûts :", EN: "Sources of the costs:"},
    "fit.notice": {
        FR: "Estimation de premier ordre : vérifiez sur un vrai pas d'entraînement "
        "(docs/sharding.md).",
        EN: "First-order estimate: check on a real training step (docs/sharding.md).",
    },
    "fit.yes": {FR: "oui", EN: "yes"},
    "fit.no": {FR: "non", EN: "no"},
    # --- parts added by sharding ---------------------------------------------------------------
    "part.weights_per_gpu": {FR: "poids (part de ce GPU)", EN: "weights (this GPU's share)"},
    "part.comm_buffers": {
        FR: "tampons de communication (seaux de gradients)",
        EN: "communication buffers (gradient buckets)",
    },
    "part.sharding_buffers": {
        FR: "paramètres rassemblés et tampons du partage",
        EN: "gathered parameters and sharding buffers",
    },
    # --- changes --------------------------------------------------------------------------------
    "change.attention_kernel": {FR: "noyau d'attention fusionné", EN: "fused attention kernel"},
    "change.chunked_loss": {FR: "perte par morceaux", EN: "chunked loss"},
    "change.checkpointing": {FR: "checkpointing des activations",
                             EN: "activation checkpointing"},
    "change.optimizer_8bit": {FR: "optimiseur 8 bits", EN: "8-bit optimizer"},
    "change.micro_batch": {FR: "micro-lot plus petit + accumulation",
                           EN: "smaller micro-batch + accumulation"},
    "change.sharding": {FR: "étape ZeRO / FSDP", EN: "ZeRO stage / FSDP"},
    "change.offload_optimizer": {FR: "déchargement de l'optimiseur",
                                 EN: "optimizer offload"},
    "change.offload_params": {FR: "déchargement des paramètres",
                              EN: "parameter offload"},
    "change.lora": {FR: "LoRA", EN: "LoRA"},
    "change.qlora": {FR: "QLoRA", EN: "QLoRA"},
    "change.shorter_sequence": {FR: "séquences plus courtes", EN: "shorter sequences"},
    "speed.faster": {FR: "plus rapide", EN: "faster"},
    "speed.none": {FR: "inchangée", EN: "unchanged"},
    "speed.small": {FR: "un peu plus lent", EN: "slightly slower"},
    "speed.moderate": {FR: "plus lent", EN: "slower"},
    "speed.large": {FR: "bien plus lent", EN: "much slower"},
    "quality.none": {FR: "identique", EN: "identical"},
    "quality.negligible": {FR: "équivalente (publiée)", EN: "on par (published)"},
    "quality.task_dependent": {FR: "selon la tâche", EN: "task-dependent"},
    "quality.changes_data": {FR: "données tronquées", EN: "truncated data"},
}
